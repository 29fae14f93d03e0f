//! Where output goes: a file named by `--out` (created or truncated) or a locked stdout,
//! both buffered; and the one I/O error that is not a failure, a closed pipe.

use std::fs::File;
use std::io::{self, BufWriter, IsTerminal as _, Write};
use std::path::Path;

use anyhow::Context as _;

/// Opens the output: `path`, or stdout when there is none.
pub fn open(path: Option<&Path>) -> anyhow::Result<Box<dyn Write>> {
    match path {
        Some(path) => {
            let file = File::create(path)
                .with_context(|| format!("cannot create the output file {}", path.display()))?;
            Ok(Box::new(BufWriter::new(file)))
        }
        None => Ok(Box::new(BufWriter::new(io::stdout().lock()))),
    }
}

/// Writes `text` to stdout and flushes; a reader that went away (`subsim rules | head`) is
/// not an error.
pub fn print(text: &str) -> anyhow::Result<()> {
    let mut stdout = io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(error) if !is_broken_pipe(&error) => {
            Err(anyhow::Error::new(error).context("cannot write to stdout"))
        }
        _ => Ok(()),
    }
}

/// True for the error a write gets when the reader went away (`subsim run | head`):
/// nothing is wrong, there is just no one left to read.
pub fn is_broken_pipe(error: &io::Error) -> bool {
    error.kind() == io::ErrorKind::BrokenPipe
}

/// Whether to color what goes to stdout.
pub fn stdout_color() -> bool {
    io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

/// Whether to color what goes to stderr.
pub fn stderr_color() -> bool {
    io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}
