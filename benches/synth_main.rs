//! `cargo run --release --example synth -- [--objects 100k] [--namespaces 100] [--crds 300]
//! [--crd-groups 30] [--seed 1] [--chain-depth 1000] [--terminating 1%] [--full] [--metadata-only-lean]
//! [--out FILE]`

#[path = "synth.rs"]
mod synth;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (opts, out) = match synth::Options::from_args(&args) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    };
    let result = match &out {
        Some(path) => std::fs::File::create(path).and_then(|f| synth::generate(&opts, std::io::BufWriter::new(f))),
        None => synth::generate(&opts, std::io::BufWriter::new(std::io::stdout().lock())),
    };
    match result {
        Ok((n, lm)) => eprintln!(
            "wrote {n} objects ({} marked terminating); stuck: {:?}; namespace: {:?}",
            lm.terminating, lm.stuck, lm.namespace
        ),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
