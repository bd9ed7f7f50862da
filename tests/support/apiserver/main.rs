//! `cargo run --example apiserver -- --snapshot FILE [--port N] [--address-file FILE] [--legacy]
//! [--page N] [--log] [--drop MODE] [--script FILE] [--bookmarks SECONDS]`: the test API server on its
//! own, to point kubectl or kubectl-gc at by hand. Its address is printed, and written to the
//! address file, only once it listens, so a script that waits for the file (as the README's
//! does: `cargo run` may compile for minutes first) never races it. A script is a JSON array of steps, each `{"after": SECONDS, ...}` with
//! one of `"put": OBJECT`, `"remove": OBJECT`, `"drop": true` (end every open watch) or
//! `"expire": true` (410 Gone), run from the first WATCH request on.

#[path = "mod.rs"]
mod apiserver;

use std::path::PathBuf;

fn main() {
    let mut snapshot = None;
    let mut options = apiserver::Options::default();
    let mut port = 8001u16;
    let mut address_file: Option<PathBuf> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--snapshot" => snapshot = args.next().map(PathBuf::from),
            "--port" => port = args.next().and_then(|p| p.parse().ok()).expect("--port takes a number"),
            "--address-file" => {
                address_file = Some(args.next().map(PathBuf::from).expect("--address-file takes a file"))
            }
            "--legacy" => options.aggregated = false,
            "--log" => options.echo = true,
            "--page" => options.max_page = args.next().and_then(|p| p.parse().ok()).expect("--page takes a number"),
            "--drop" => {
                options.drop_managed_fields = match args.next().as_deref() {
                    Some("honour") => apiserver::DropManagedFields::Honour,
                    Some("ignore") => apiserver::DropManagedFields::Ignore,
                    Some("skip") => apiserver::DropManagedFields::Skip,
                    _ => panic!("--drop takes honour, ignore or skip"),
                }
            }
            "--script" => {
                let path = args.next().expect("--script takes a file");
                let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {path}: {e}"));
                let steps: Vec<serde_json::Value> = serde_json::from_str(&text).expect("a script is a JSON array");
                options.script = steps
                    .iter()
                    .map(|step| apiserver::watch::Scripted {
                        after: std::time::Duration::from_secs_f64(step["after"].as_f64().unwrap_or(0.0)),
                        action: apiserver::watch::Action::from_json(step)
                            .unwrap_or_else(|| panic!("a step puts, removes, drops or expires: {step}")),
                    })
                    .collect();
            }
            "--bookmarks" => {
                let secs: f64 = args.next().and_then(|p| p.parse().ok()).expect("--bookmarks takes seconds");
                options.bookmark_every = std::time::Duration::from_secs_f64(secs);
            }
            "-h" | "--help" => {
                println!(
                    "usage: apiserver --snapshot FILE [--port N (default 8001, 0 = any)] [--address-file FILE (the URL, written once listening)] [--legacy] [--page N] [--log (each request on stderr: bytes, method, path, Accept)] [--drop honour|ignore|skip (drop=metadata.managedFields; default honour)] [--script FILE] [--bookmarks SECONDS]"
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
    // start_with returns once the socket listens: from here a connection is accepted
    let server = apiserver::ApiServer::start_with(&snapshot, options, port);
    if let Some(file) = &address_file {
        // whole or not at all: written beside, then renamed, so a reader never sees half a URL
        let tmp = file.with_extension("partial");
        std::fs::write(&tmp, format!("{}\n", server.url()))
            .unwrap_or_else(|e| panic!("writing {}: {e}", tmp.display()));
        std::fs::rename(&tmp, file).unwrap_or_else(|e| panic!("writing {}: {e}", file.display()));
    }
    println!("serving {} at {}", snapshot.display(), server.url());
    println!("try: kubectl-gc --server {} why-stuck ns/labs", server.url());
    loop {
        std::thread::park();
    }
}
