//! MSL type names: scalar kind, vector lanes, packing, atomics and MSL byte sizes.

use serde::Serialize;

/// The element kind of a scalar, vector or atomic MSL type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ScalarKind {
    /// `bool`
    Bool,
    /// `char`, `int8_t`
    I8,
    /// `uchar`, `uint8_t`
    U8,
    /// `short`, `int16_t`
    I16,
    /// `ushort`, `uint16_t`
    U16,
    /// `int`, `int32_t`
    I32,
    /// `uint`, `uint32_t`, `unsigned`
    U32,
    /// `long`, `int64_t`
    I64,
    /// `ulong`, `uint64_t`, `size_t`
    U64,
    /// `half`
    F16,
    /// `bfloat`
    BF16,
    /// `float`
    F32,
    /// `double` (not on Metal; the CPU and CUDA targets accept it)
    F64,
}

impl ScalarKind {
    /// Size in bytes.
    pub fn size(self) -> u32 {
        match self {
            ScalarKind::Bool | ScalarKind::I8 | ScalarKind::U8 => 1,
            ScalarKind::I16 | ScalarKind::U16 | ScalarKind::F16 | ScalarKind::BF16 => 2,
            ScalarKind::I32 | ScalarKind::U32 | ScalarKind::F32 => 4,
            ScalarKind::I64 | ScalarKind::U64 | ScalarKind::F64 => 8,
        }
    }

    /// The MSL spelling (`uint`, `half`, ...), usable in the generated C++.
    pub fn msl_name(self) -> &'static str {
        match self {
            ScalarKind::Bool => "bool",
            ScalarKind::I8 => "char",
            ScalarKind::U8 => "uchar",
            ScalarKind::I16 => "short",
            ScalarKind::U16 => "ushort",
            ScalarKind::I32 => "int",
            ScalarKind::U32 => "uint",
            ScalarKind::I64 => "long",
            ScalarKind::U64 => "ulong",
            ScalarKind::F16 => "half",
            ScalarKind::BF16 => "bfloat",
            ScalarKind::F32 => "float",
            ScalarKind::F64 => "double",
        }
    }

    /// The scalar named `name` (MSL or `<cstdint>` spelling).
    pub fn from_name(name: &str) -> Option<ScalarKind> {
        Some(match name {
            "bool" => ScalarKind::Bool,
            "char" | "int8_t" | "signed char" => ScalarKind::I8,
            "uchar" | "uint8_t" | "unsigned char" => ScalarKind::U8,
            "short" | "int16_t" => ScalarKind::I16,
            "ushort" | "uint16_t" | "unsigned short" => ScalarKind::U16,
            "int" | "int32_t" | "signed" | "signed int" => ScalarKind::I32,
            "uint" | "uint32_t" | "unsigned" | "unsigned int" => ScalarKind::U32,
            "long" | "int64_t" | "ptrdiff_t" | "long long" => ScalarKind::I64,
            "ulong" | "uint64_t" | "size_t" | "unsigned long" | "unsigned long long" => {
                ScalarKind::U64
            }
            "half" => ScalarKind::F16,
            "bfloat" | "bfloat16_t" => ScalarKind::BF16,
            "float" => ScalarKind::F32,
            "double" => ScalarKind::F64,
            _ => return None,
        })
    }
}

/// A known MSL value type, parsed from its spelling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TypeInfo {
    /// The element kind.
    pub scalar: ScalarKind,
    /// 1 for a scalar, 2..=4 for a vector.
    pub lanes: u32,
    /// `packed_floatN`: no padding, element alignment.
    pub packed: bool,
    /// `atomic_uint`, `atomic<T>`: same size as `T`.
    pub atomic: bool,
    /// Columns of a matrix (`float4x3` has 4 columns of `float3`), 0 for non-matrices.
    pub columns: u32,
    /// Size in bytes with MSL layout (`float3` is 16, `packed_float3` 12).
    pub size: u32,
    /// Alignment in bytes with MSL layout.
    pub align: u32,
}

impl TypeInfo {
    fn new(scalar: ScalarKind, lanes: u32, packed: bool) -> TypeInfo {
        let s = scalar.size();
        let (size, align) = if packed || lanes == 1 {
            (s * lanes, s)
        } else {
            let padded = if lanes == 3 { 4 } else { lanes };
            (s * padded, s * padded)
        };
        TypeInfo {
            scalar,
            lanes,
            packed,
            atomic: false,
            columns: 0,
            size,
            align,
        }
    }
}

/// Splits `float4` into (`float`, 4); `float` gives (`float`, 1).
fn split_lanes(name: &str) -> (&str, u32) {
    match name.as_bytes().last() {
        Some(d @ b'2'..=b'4') => {
            let base = &name[..name.len() - 1];
            // `int8_t`-style names end in `_t`, never in a lane digit, so this is safe.
            (base, u32::from(d - b'0'))
        }
        _ => (name, 1),
    }
}

/// Parses a type spelled as `words` (tokens with address spaces, `const`, `volatile`,
/// `metal::` and `struct` already removed), e.g. `["float4"]`, `["vec", "<", "half", ",", "3",
/// ">"]`, `["atomic", "<", "uint", ">"]`, `["unsigned", "int"]`. `None` for anything else
/// (user structs, template parameters, pointers).
pub fn parse_type(words: &[&str]) -> Option<TypeInfo> {
    match words {
        [one] => parse_simple(one),
        ["vec", "<", t, ",", n, ">"] => {
            let lanes: u32 = n.parse().ok()?;
            if !(2..=4).contains(&lanes) {
                return None;
            }
            let s = ScalarKind::from_name(t)?;
            Some(TypeInfo::new(s, lanes, false))
        }
        ["atomic", "<", rest @ .., ">"] => {
            let mut t = parse_type(rest)?;
            if t.lanes != 1 {
                return None;
            }
            t.atomic = true;
            Some(t)
        }
        _ => {
            let joined = words.join(" ");
            ScalarKind::from_name(&joined).map(|s| TypeInfo::new(s, 1, false))
        }
    }
}

fn parse_simple(name: &str) -> Option<TypeInfo> {
    if let Some(s) = ScalarKind::from_name(name) {
        return Some(TypeInfo::new(s, 1, false));
    }
    if let Some(rest) = name.strip_prefix("atomic_") {
        let s = ScalarKind::from_name(rest)?;
        let mut t = TypeInfo::new(s, 1, false);
        t.atomic = true;
        return Some(t);
    }
    if let Some(rest) = name.strip_prefix("packed_") {
        let (base, lanes) = split_lanes(rest);
        if lanes == 1 {
            return None;
        }
        let s = ScalarKind::from_name(base)?;
        return Some(TypeInfo::new(s, lanes, true));
    }
    // Matrices: floatCxR / halfCxR.
    if let Some((left, rows)) = name.rsplit_once('x') {
        let rows: u32 = rows.parse().ok().filter(|r| (2..=4).contains(r))?;
        let (base, cols) = split_lanes(left);
        if cols == 1 || !matches!(base, "float" | "half" | "bfloat" | "double") {
            return None;
        }
        let s = ScalarKind::from_name(base)?;
        let col = TypeInfo::new(s, rows, false);
        let mut t = TypeInfo::new(s, rows, false);
        t.columns = cols;
        t.size = col.size * cols;
        t.align = col.align;
        return Some(t);
    }
    let (base, lanes) = split_lanes(name);
    if lanes == 1 {
        return None;
    }
    let s = ScalarKind::from_name(base)?;
    Some(TypeInfo::new(s, lanes, false))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Option<TypeInfo> {
        let w: Vec<&str> = s.split(' ').collect();
        parse_type(&w)
    }

    #[test]
    fn sizes_follow_msl() {
        assert_eq!(p("float3").unwrap().size, 16);
        assert_eq!(p("packed_float3").unwrap().size, 12);
        assert_eq!(p("packed_float3").unwrap().align, 4);
        assert_eq!(p("half4").unwrap().size, 8);
        assert_eq!(p("half3").unwrap().size, 8);
        assert_eq!(p("uchar2").unwrap().size, 2);
        assert_eq!(p("bool").unwrap().size, 1);
        assert_eq!(p("size_t").unwrap().scalar, ScalarKind::U64);
        assert_eq!(p("uint64_t").unwrap().size, 8);
        assert_eq!(p("int8_t").unwrap().lanes, 1);
        assert_eq!(p("float4x4").unwrap().size, 64);
        assert_eq!(p("half3x3").unwrap().size, 24);
        assert_eq!(p("float2x3").unwrap().columns, 2);
    }

    #[test]
    fn templates_and_atomics() {
        let t = p("vec < float , 3 >").unwrap();
        assert_eq!((t.lanes, t.size), (3, 16));
        let a = p("atomic < uint >").unwrap();
        assert!(a.atomic);
        assert_eq!((a.scalar, a.size), (ScalarKind::U32, 4));
        let a = p("atomic_float").unwrap();
        assert_eq!(a.scalar, ScalarKind::F32);
        assert!(a.atomic);
        assert_eq!(p("unsigned int").unwrap().scalar, ScalarKind::U32);
        assert!(p("Params").is_none());
        assert!(p("T").is_none());
        assert!(p("float5").is_none());
        assert!(p("vec < float , 7 >").is_none());
    }
}
