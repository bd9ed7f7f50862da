//! `kubectl gc snapshot --file`: the file appears whole or not at all. It is written to a
//! temporary file in the same directory (created exclusively, under a random name, mode 0600:
//! a snapshot holds pod specs with literal env values), synced, then renamed into place — so a
//! full disk or an interrupted run never leaves a truncated file where a good one was. An
//! existing file (or link) is kept unless `--force` is given; a link at the path is replaced,
//! never followed.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result, bail};

/// What the body is written to.
pub type Out<'a> = std::io::BufWriter<&'a mut std::fs::File>;

pub fn write(path: &Path, force: bool, body: impl FnOnce(&mut Out<'_>) -> Result<()>) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path.file_name().with_context(|| format!("{} names no file", path.display()))?;
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{}.", name.to_string_lossy()))
        .suffix(".tmp")
        .permissions(private())
        .tempfile_in(dir)
        .with_context(|| format!("cannot create a file in {}", dir.display()))?;
    {
        let mut w = std::io::BufWriter::new(tmp.as_file_mut());
        body(&mut w)
            .and_then(|_| w.flush().map_err(Into::into))
            .with_context(|| format!("writing {}", path.display()))?;
    }
    tmp.as_file().sync_all().with_context(|| format!("writing {}", path.display()))?;
    // a failed persist drops the temporary file, which removes it
    if force {
        tmp.persist(path).map_err(|e| e.error).with_context(|| format!("cannot write {}", path.display()))?;
    } else {
        match tmp.persist_noclobber(path) {
            Ok(_) => {}
            Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => {
                bail!("{} exists: give --force to replace it, or another --file", path.display())
            }
            Err(e) => return Err(e.error).with_context(|| format!("cannot write {}", path.display())),
        }
    }
    Ok(())
}

#[cfg(unix)]
fn private() -> std::fs::Permissions {
    use std::os::unix::fs::PermissionsExt;
    std::fs::Permissions::from_mode(0o600)
}

#[cfg(not(unix))]
fn private() -> std::fs::Permissions {
    tempfile::NamedTempFile::new().and_then(|f| f.as_file().metadata()).map(|m| m.permissions()).expect("a temp file")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_whole_private_and_never_over_an_existing_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("snap.json");
        write(&path, false, |w| Ok(w.write_all(b"{}")?)).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"{}");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        }
        // exists: kept without --force
        let err = write(&path, false, |w| Ok(w.write_all(b"new")?)).unwrap_err();
        assert!(format!("{err:#}").contains("--force"), "{err:#}");
        assert_eq!(std::fs::read(&path).unwrap(), b"{}");
        // a failure midway leaves the old file as it was, and no temporary file
        let err = write(&path, true, |w| {
            w.write_all(b"partial")?;
            bail!("disk full")
        })
        .unwrap_err();
        assert!(format!("{err:#}").contains("disk full"));
        assert_eq!(std::fs::read(&path).unwrap(), b"{}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "no temporary file left");
        // --force replaces
        write(&path, true, |w| Ok(w.write_all(b"new")?)).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
    }

    #[cfg(unix)]
    #[test]
    fn a_link_at_the_path_is_replaced_never_followed() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        let path = dir.path().join("snap.json");
        std::os::unix::fs::symlink(&victim, &path).unwrap();
        assert!(write(&path, false, |w| Ok(w.write_all(b"{}")?)).is_err());
        write(&path, true, |w| Ok(w.write_all(b"{}")?)).unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        assert!(!std::fs::symlink_metadata(&path).unwrap().file_type().is_symlink());
    }
}
