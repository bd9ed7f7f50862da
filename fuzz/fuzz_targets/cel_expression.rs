#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    kubectl_gc::fuzz::cel_expression(data);
});
