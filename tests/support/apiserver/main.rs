//! `cargo run --example apiserver -- --snapshot FILE [--port N] [--legacy] [--page N] [--drop MODE]`: the test
//! API server on its own, to point kubectl or kubectl-gc at by hand.

#[path = "mod.rs"]
mod apiserver;

use std::path::PathBuf;

fn main() {
    let mut snapshot = None;
    let mut options = apiserver::Options::default();
    let mut port = 8001u16;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--snapshot" => snapshot = args.next().map(PathBuf::from),
            "--port" => port = args.next().and_then(|p| p.parse().ok()).expect("--port takes a number"),
            "--legacy" => options.aggregated = false,
            "--page" => options.max_page = args.next().and_then(|p| p.parse().ok()).expect("--page takes a number"),
            "--drop" => {
                options.drop_managed_fields = match args.next().as_deref() {
                    Some("honour") => apiserver::DropManagedFields::Honour,
                    Some("ignore") => apiserver::DropManagedFields::Ignore,
                    Some("skip") => apiserver::DropManagedFields::Skip,
                    _ => panic!("--drop takes honour, ignore or skip"),
                }
            }
            "-h" | "--help" => {
                println!(
                    "usage: apiserver --snapshot FILE [--port N (default 8001, 0 = any)] [--legacy] [--page N] [--drop honour|ignore|skip (drop=metadata.managedFields; default honour)]"
                );
                return;
            }
            other => {
                eprintln!("unknown argument {other:?}; see --help");
                std::process::exit(1);
            }
        }
    }
    let Some(snapshot) = snapshot else {
        eprintln!("--snapshot FILE is required");
        std::process::exit(1);
    };
    let server = apiserver::ApiServer::start_with(&snapshot, options, port);
    println!("serving {} at {}", snapshot.display(), server.url());
    println!("try: kubectl-gc --server {} why-stuck ns/labs", server.url());
    loop {
        std::thread::park();
    }
}
