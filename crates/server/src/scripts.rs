//! The server's scripting state: the Lua states, the function libraries
//! and the file keeping them, the running script (the data
//! [`crate::scripting`] works on; a leaf the server's state holds).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use parking_lot::Mutex;
use redcodec_scripting::{RunControl, Scripting};

/// The file in the data directory that keeps the function libraries.
pub const FUNCTIONS_FILE: &str = "redcodec-functions";

/// The first line of [`FUNCTIONS_FILE`].
const FILE_HEADER: &[u8] = b"redcodec-functions 1\n";

/// What a running script shows FUNCTION STATS.
pub(crate) struct Running {
    pub(crate) name: String,
    pub(crate) command: Vec<bytes::Bytes>,
    pub(crate) started: Instant,
}

/// The lanes scripts run in side by side ([`crate::script_lane`]).
#[derive(Default)]
pub(crate) struct LanePool {
    pub(crate) free: Vec<redcodec_scripting::Lane>,
    pub(crate) made: usize,
}

/// The server's scripting state.
pub struct Scripts {
    pub(crate) scripting: Mutex<Scripting>,
    pub(crate) control: Arc<RunControl>,
    pub(crate) running: Mutex<Option<Running>>,
    pub(crate) file: Option<PathBuf>,
    pub(crate) lanes: Mutex<LanePool>,
}

fn log_line(level: u8, text: &str) {
    // Redis' default verbosity is `notice`: debug and verbose are dropped.
    if level >= 2 {
        eprintln!("redcodec serve: script: {text}");
    }
}

impl Scripts {
    /// A fresh state; with a data directory, the libraries it keeps are
    /// loaded.
    pub fn new(dir: &str) -> Scripts {
        let logger: redcodec_scripting::Logger = Arc::new(log_line);
        let mut scripting = Scripting::new(logger).expect("a Lua state starts");
        let file = (!dir.is_empty()).then(|| Path::new(dir).join(FUNCTIONS_FILE));
        if let Some(path) = &file {
            match read_libraries(path) {
                Ok(codes) if !codes.is_empty() => {
                    if let Err(e) = scripting.functions_mut().restore(&codes, true) {
                        eprintln!(
                            "redcodec serve: the function libraries in {} do not load: {e}",
                            path.display()
                        );
                    }
                }
                Ok(_) => {}
                Err(e) => eprintln!(
                    "redcodec serve: the function libraries in {} cannot be read: {e}",
                    path.display()
                ),
            }
        }
        let control = scripting.control();
        control.on_long_run(|| {
            crate::script_worker::hand_off();
        });
        Scripts {
            scripting: Mutex::new(scripting),
            control,
            running: Mutex::new(None),
            file,
            lanes: Mutex::new(LanePool::default()),
        }
    }

    /// The run control (BUSY, KILL).
    pub fn control(&self) -> &RunControl {
        &self.control
    }

    /// INFO's memory figures: the EVAL Lua state, the functions' state,
    /// the cached scripts' sources, and the number of cached scripts.
    pub fn memory(&self) -> Option<(usize, usize, usize, usize)> {
        let s = self.scripting.try_lock()?;
        Some((
            s.eval_memory(),
            s.functions_memory(),
            s.scripts_bytes(),
            s.cached_scripts(),
        ))
    }

    /// Writes the libraries to the data directory.
    pub(crate) fn persist(&self, scripting: &Scripting) -> Result<(), String> {
        let Some(path) = &self.file else {
            return Ok(());
        };
        let codes: Vec<&[u8]> = scripting
            .functions()
            .libraries()
            .map(|l| l.code.as_slice())
            .collect();
        write_libraries(path, &codes).map_err(|e| {
            format!(
                "ERR the function libraries could not be saved to {}: {e}",
                path.display()
            )
        })
    }
}

/// Reads [`FUNCTIONS_FILE`]: the libraries' codes (none without a file).
pub fn read_libraries(path: &Path) -> std::io::Result<Vec<Vec<u8>>> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let bad = || std::io::Error::new(std::io::ErrorKind::InvalidData, "not a functions file");
    let mut rest = bytes.strip_prefix(FILE_HEADER).ok_or_else(bad)?;
    let mut codes = Vec::new();
    while !rest.is_empty() {
        let nl = rest.iter().position(|&b| b == b'\n').ok_or_else(bad)?;
        let len: usize = std::str::from_utf8(&rest[..nl])
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or_else(bad)?;
        let body = rest.get(nl + 1..nl + 1 + len).ok_or_else(bad)?;
        if rest.get(nl + 1 + len) != Some(&b'\n') {
            return Err(bad());
        }
        codes.push(body.to_vec());
        rest = &rest[nl + 2 + len..];
    }
    Ok(codes)
}

/// Replaces [`FUNCTIONS_FILE`] atomically with `codes`.
pub fn write_libraries(path: &Path, codes: &[&[u8]]) -> std::io::Result<()> {
    let mut out = FILE_HEADER.to_vec();
    for code in codes {
        out.extend_from_slice(format!("{}\n", code.len()).as_bytes());
        out.extend_from_slice(code);
        out.push(b'\n');
    }
    crate::durable::replace(path, &out)
}
