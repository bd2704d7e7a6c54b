//! Script flags: the `#!lua flags=…` shebang of an EVAL script and the
//! `flags` of a function (Redis 7.0's `scripts_flags_def`), with Redis'
//! error texts.

use redcodec_protocol::cmdline::split_arg_bytes;

/// A shebang script that may write, run by EVAL_RO or FCALL_RO.
pub const WRITE_FLAG_WITH_RO: &str =
    "ERR Can not execute a script with write flag using *_ro command.";

/// The flags a script or function declares.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScriptFlags {
    /// No shebang: Redis' compatibility mode (the script may write, and
    /// its declared keys are not checked).
    pub eval_compat: bool,
    /// `no-writes`
    pub no_writes: bool,
    /// `allow-oom`
    pub allow_oom: bool,
    /// `allow-stale`
    pub allow_stale: bool,
    /// `no-cluster`
    pub no_cluster: bool,
    /// `allow-cross-slot-keys`
    pub allow_cross_slot: bool,
}

/// Every flag by name, in Redis' order.
pub const FLAG_NAMES: &[&str] = &[
    "no-writes",
    "allow-oom",
    "allow-stale",
    "no-cluster",
    "allow-cross-slot-keys",
];

impl ScriptFlags {
    /// Sets the flag named `name`; `false` for a name Redis does not know.
    pub fn set(&mut self, name: &[u8]) -> bool {
        let flag = match name {
            b"no-writes" => &mut self.no_writes,
            b"allow-oom" => &mut self.allow_oom,
            b"allow-stale" => &mut self.allow_stale,
            b"no-cluster" => &mut self.no_cluster,
            b"allow-cross-slot-keys" => &mut self.allow_cross_slot,
            _ => return false,
        };
        *flag = true;
        true
    }

    /// The names of the flags set, in Redis' order (FUNCTION LIST).
    pub fn names(&self) -> Vec<&'static str> {
        let set = [
            self.no_writes,
            self.allow_oom,
            self.allow_stale,
            self.no_cluster,
            self.allow_cross_slot,
        ];
        FLAG_NAMES
            .iter()
            .zip(set)
            .filter(|(_, on)| *on)
            .map(|(n, _)| *n)
            .collect()
    }

    /// Whether a run with these flags may write (`EVAL_RO` and
    /// `FCALL_RO` refuse those that may).
    pub fn may_write(&self) -> bool {
        self.eval_compat || !self.no_writes
    }
}

/// Reads the shebang of an EVAL script (Redis' `evalExtractShebangFlags`):
/// the flags, and how many bytes the shebang line takes (its newline is
/// kept so line numbers stay right). Without a shebang: compatibility mode
/// and 0. The error is Redis' text, without the `ERR ` code.
pub fn parse_shebang(body: &[u8]) -> Result<(ScriptFlags, usize), String> {
    if !body.starts_with(b"#!") {
        return Ok((
            ScriptFlags {
                eval_compat: true,
                ..ScriptFlags::default()
            },
            0,
        ));
    }
    let Some(end) = body.iter().position(|&b| b == b'\n') else {
        return Err("Invalid script shebang".into());
    };
    let parts = match split_arg_bytes(&body[..end]) {
        Ok(parts) if !parts.is_empty() => parts,
        _ => return Err("Invalid engine in script shebang".into()),
    };
    if parts[0] != b"#!lua" {
        return Err(format!(
            "Unexpected engine in script shebang: {}",
            String::from_utf8_lossy(&parts[0])
        ));
    }
    let mut flags = ScriptFlags::default();
    for part in &parts[1..] {
        let Some(list) = part.strip_prefix(b"flags=") else {
            return Err(format!(
                "Unknown lua shebang option: {}",
                String::from_utf8_lossy(part)
            ));
        };
        if list.is_empty() {
            continue;
        }
        for name in list.split(|&b| b == b',') {
            if !flags.set(name) {
                return Err(format!(
                    "Unexpected flag in script shebang: {}",
                    String::from_utf8_lossy(name)
                ));
            }
        }
    }
    Ok((flags, end))
}

#[cfg(test)]
mod tests {
    use super::parse_shebang;

    #[test]
    fn shebangs_as_redis_reads_them() {
        let (flags, len) = parse_shebang(b"return 1").unwrap();
        assert!(flags.eval_compat && flags.may_write());
        assert_eq!(len, 0);
        let (flags, len) = parse_shebang(b"#!lua flags=no-writes,allow-oom\nreturn 1").unwrap();
        assert!(!flags.eval_compat && flags.no_writes && flags.allow_oom);
        assert!(!flags.may_write());
        assert_eq!(len, 31);
        let (flags, _) = parse_shebang(b"#!lua\nreturn 1").unwrap();
        assert!(!flags.eval_compat && flags.may_write());
        assert_eq!(
            parse_shebang(b"#!lua").unwrap_err(),
            "Invalid script shebang"
        );
        assert_eq!(
            parse_shebang(b"#!python\n").unwrap_err(),
            "Unexpected engine in script shebang: #!python"
        );
        assert_eq!(
            parse_shebang(b"#!lua flags=bad\n").unwrap_err(),
            "Unexpected flag in script shebang: bad"
        );
        assert_eq!(
            parse_shebang(b"#!lua name=x\n").unwrap_err(),
            "Unknown lua shebang option: name=x"
        );
    }
}
