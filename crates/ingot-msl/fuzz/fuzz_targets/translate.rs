//! Any UTF-8 input gives a reflection / translation or a located error, never a panic.
#![no_main]

use ingot_msl::{reflect, sandbox, translate, Options, Target};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    if let Err(e) = reflect(src) {
        assert!(e.line >= 1 && e.column >= 1);
    }
    for target in [Target::Cuda, Target::Cpu] {
        let mut opts = Options::new(target);
        // Exercise the function-constant paths too.
        opts.constants.insert("0".to_string(), "1".to_string());
        let _ = translate(src, &opts);
        let _ = translate(src, &Options::new(target));
        // Checked mode's pointer rewriting.
        let mut checked = Options::new(target);
        checked.checked = true;
        let _ = translate(src, &checked);
    }
    if let Err(e) = sandbox::check(src, "fuzz.metal", &[], &["metal_stdlib"]) {
        assert!(e.line >= 1 && e.column >= 1);
    }
});
