//! Integer constant expressions, as written in `[[function_constant(FC_BASE + 1)]]`.
//!
//! A small recursive-descent evaluator over the expression's text: integer literals (decimal,
//! hex, octal, with `u`/`l` suffixes), parentheses, unary `+ - ~ !`, the binary arithmetic,
//! shift, bitwise and comparison operators with C precedence, and identifiers resolved by the
//! caller (program-scope constants). Anything else is not a constant expression (`None`).

/// Evaluates `expr`; `lookup` gives the value of an identifier (`None`: not a constant).
pub(crate) fn eval_int(expr: &str, lookup: &dyn Fn(&str) -> Option<i64>) -> Option<i64> {
    let toks = tokens(expr)?;
    let mut p = Parser {
        toks: &toks,
        pos: 0,
        lookup,
    };
    let v = p.binary(0)?;
    (p.pos == toks.len()).then_some(v)
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(i64),
    Ident(String),
    Op(&'static str),
}

const OPS: &[&str] = &[
    "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+", "-", "*", "/", "%", "(", ")", "<", ">",
    "&", "|", "^", "~", "!",
];

fn tokens(s: &str) -> Option<Vec<Tok>> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'\'') {
                i += 1;
            }
            out.push(Tok::Num(literal(&s[start..i])?));
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b':') {
                i += 1;
            }
            out.push(Tok::Ident(s[start..i].to_string()));
        } else {
            let op = OPS.iter().find(|op| s[i..].starts_with(**op))?;
            out.push(Tok::Op(op));
            i += op.len();
        }
    }
    Some(out)
}

fn literal(s: &str) -> Option<i64> {
    let s: String = s.chars().filter(|&c| c != '\'').collect();
    let s = s.trim_end_matches(['u', 'U', 'l', 'L']);
    let v = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()?
    } else if let Some(bin) = s.strip_prefix("0b").or_else(|| s.strip_prefix("0B")) {
        u64::from_str_radix(bin, 2).ok()?
    } else if s.len() > 1 && s.starts_with('0') {
        u64::from_str_radix(&s[1..], 8).ok()?
    } else {
        s.parse::<u64>().ok()?
    };
    i64::try_from(v).ok()
}

struct Parser<'a> {
    toks: &'a [Tok],
    pos: usize,
    lookup: &'a dyn Fn(&str) -> Option<i64>,
}

/// Binary operators by precedence level, lowest first.
const LEVELS: &[&[&str]] = &[
    &["||"],
    &["&&"],
    &["|"],
    &["^"],
    &["&"],
    &["==", "!="],
    &["<", ">", "<=", ">="],
    &["<<", ">>"],
    &["+", "-"],
    &["*", "/", "%"],
];

impl Parser<'_> {
    fn peek_op(&self) -> Option<&'static str> {
        match self.toks.get(self.pos) {
            Some(Tok::Op(o)) => Some(o),
            _ => None,
        }
    }

    fn binary(&mut self, level: usize) -> Option<i64> {
        if level == LEVELS.len() {
            return self.unary();
        }
        let mut l = self.binary(level + 1)?;
        while let Some(op) = self.peek_op().filter(|o| LEVELS[level].contains(o)) {
            self.pos += 1;
            let r = self.binary(level + 1)?;
            l = match op {
                "||" => i64::from(l != 0 || r != 0),
                "&&" => i64::from(l != 0 && r != 0),
                "|" => l | r,
                "^" => l ^ r,
                "&" => l & r,
                "==" => i64::from(l == r),
                "!=" => i64::from(l != r),
                "<" => i64::from(l < r),
                ">" => i64::from(l > r),
                "<=" => i64::from(l <= r),
                ">=" => i64::from(l >= r),
                "<<" => l.checked_shl(u32::try_from(r).ok()?)?,
                ">>" => l.checked_shr(u32::try_from(r).ok()?)?,
                "+" => l.checked_add(r)?,
                "-" => l.checked_sub(r)?,
                "*" => l.checked_mul(r)?,
                "/" => l.checked_div(r)?,
                "%" => l.checked_rem(r)?,
                _ => return None,
            };
        }
        Some(l)
    }

    fn unary(&mut self) -> Option<i64> {
        let t = self.toks.get(self.pos)?.clone();
        self.pos += 1;
        match t {
            Tok::Num(n) => Some(n),
            Tok::Ident(name) => match name.as_str() {
                "true" => Some(1),
                "false" => Some(0),
                _ => (self.lookup)(&name),
            },
            Tok::Op("(") => {
                let v = self.binary(0)?;
                if self.peek_op() != Some(")") {
                    return None;
                }
                self.pos += 1;
                Some(v)
            }
            Tok::Op("-") => self.unary()?.checked_neg(),
            Tok::Op("+") => self.unary(),
            Tok::Op("~") => Some(!self.unary()?),
            Tok::Op("!") => Some(i64::from(self.unary()? == 0)),
            Tok::Op(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn none(_: &str) -> Option<i64> {
        None
    }

    #[test]
    fn evaluates_with_c_precedence() {
        assert_eq!(eval_int("20", &none), Some(20));
        assert_eq!(eval_int("1 + 2 * 3", &none), Some(7));
        assert_eq!(eval_int("(1 + 2) * 3", &none), Some(9));
        assert_eq!(eval_int("0x10 + 010 - 1u", &none), Some(23));
        assert_eq!(eval_int("-3 + 1 << 2", &none), Some(-8));
        assert_eq!(eval_int("7 % 4 | 8", &none), Some(11));
        assert_eq!(eval_int("1 +", &none), None);
        assert_eq!(eval_int("1 / 0", &none), None);
        assert_eq!(eval_int("1.5", &none), None);
    }

    #[test]
    fn resolves_identifiers() {
        let look = |n: &str| (n == "FC_BASE").then_some(100);
        assert_eq!(eval_int("FC_BASE + 0", &look), Some(100));
        assert_eq!(eval_int("FC_BASE+2", &look), Some(102));
        assert_eq!(eval_int("OTHER + 2", &look), None);
    }
}
