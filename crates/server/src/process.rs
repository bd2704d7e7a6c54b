//! What the operating system reports about this process, for INFO: CPU
//! time (`getrusage`), resident memory (`/proc/self/status`) and the
//! machine's memory (`sysconf`).

use std::fmt;

/// A CPU time as `getrusage` gives it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuTime {
    /// Whole seconds.
    pub sec: libc::time_t,
    /// Microseconds within the second.
    pub usec: libc::suseconds_t,
}

impl fmt::Display for CpuTime {
    /// Seconds with six decimals, as Redis prints `used_cpu_*`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:06}", self.sec, self.usec)
    }
}

/// The CPU time of the process and of its children that were waited for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuUsage {
    /// System time of the process (every thread).
    pub sys: CpuTime,
    /// User time of the process (every thread).
    pub user: CpuTime,
    /// System time of its terminated, waited-for children.
    pub sys_children: CpuTime,
    /// User time of its terminated, waited-for children.
    pub user_children: CpuTime,
}

/// `(system, user)` time of `who` (`RUSAGE_SELF` or `RUSAGE_CHILDREN`);
/// zero if `getrusage` fails.
fn rusage(who: libc::c_int) -> (CpuTime, CpuTime) {
    // SAFETY: `rusage` is plain old data; all zeroes is a valid value.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `getrusage` writes into the struct it is given, which lives
    // for the whole call.
    if unsafe { libc::getrusage(who, &mut ru) } != 0 {
        return (CpuTime::default(), CpuTime::default());
    }
    let time = |tv: libc::timeval| CpuTime {
        sec: tv.tv_sec,
        usec: tv.tv_usec,
    };
    (time(ru.ru_stime), time(ru.ru_utime))
}

/// The process' CPU time now.
pub fn cpu_usage() -> CpuUsage {
    let (sys, user) = rusage(libc::RUSAGE_SELF);
    let (sys_children, user_children) = rusage(libc::RUSAGE_CHILDREN);
    CpuUsage {
        sys,
        user,
        sys_children,
        user_children,
    }
}

/// The process' memory as `/proc/self/status` reports it, in bytes; 0
/// for what it does not report (or where there is no `/proc`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProcMemory {
    /// Resident set size (`VmRSS`).
    pub rss: u64,
    /// The largest resident set size so far (`VmHWM`).
    pub peak_rss: u64,
    /// Resident anonymous memory (`RssAnon`): the heap, stacks and
    /// RocksDB's memtables and block cache, without mapped files (the
    /// executable, shared libraries).
    pub anon: u64,
}

/// Reads `/proc/self/status`.
pub fn memory() -> ProcMemory {
    std::fs::read_to_string("/proc/self/status")
        .map(|text| parse_status(&text))
        .unwrap_or_default()
}

/// The memory fields of a `/proc/<pid>/status` text (`VmRSS:  1234 kB`).
pub fn parse_status(text: &str) -> ProcMemory {
    let mut mem = ProcMemory::default();
    for line in text.lines() {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let field = match name {
            "VmRSS" => &mut mem.rss,
            "VmHWM" => &mut mem.peak_rss,
            "RssAnon" => &mut mem.anon,
            _ => continue,
        };
        let kib = value
            .trim()
            .strip_suffix("kB")
            .and_then(|n| n.trim().parse::<u64>().ok());
        *field = kib.map_or(0, |k| k.saturating_mul(1024));
    }
    mem
}

/// The machine's physical memory in bytes (`sysconf`), as Redis reports
/// `total_system_memory`; 0 if unknown.
pub fn total_system_memory() -> u64 {
    // SAFETY: `sysconf` only reads configuration values.
    let (pages, page_size) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    match (u64::try_from(pages), u64::try_from(page_size)) {
        (Ok(pages), Ok(size)) => pages.saturating_mul(size),
        _ => 0,
    }
}

/// A byte count as Redis' `bytesToHuman` writes it: `999B`, `1.50K`,
/// `2.00M`, `3.25G`, `1.00T`, `1.00P`.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [(&str, u32); 5] = [("K", 1), ("M", 2), ("G", 3), ("T", 4), ("P", 5)];
    if n < 1024 {
        return format!("{n}B");
    }
    for (unit, power) in UNITS {
        if u128::from(n) < 1024u128.pow(power + 1) {
            return format!("{:.2}{unit}", n as f64 / 1024f64.powi(power as i32));
        }
    }
    format!("{n}B")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_fields_are_read_in_bytes() {
        let text = "Name:\tredcodec\nVmHWM:\t   20480 kB\nVmRSS:\t   10240 kB\nRssAnon:\t    4096 kB\nThreads:\t4\n";
        assert_eq!(
            parse_status(text),
            ProcMemory {
                rss: 10240 * 1024,
                peak_rss: 20480 * 1024,
                anon: 4096 * 1024,
            }
        );
        assert_eq!(parse_status("Name:\tx\n"), ProcMemory::default());
    }

    #[test]
    fn human_bytes_follows_redis() {
        assert_eq!(human_bytes(0), "0B");
        assert_eq!(human_bytes(1023), "1023B");
        assert_eq!(human_bytes(1536), "1.50K");
        assert_eq!(human_bytes(1024 * 1024), "1.00M");
        assert_eq!(
            human_bytes(3 * 1024 * 1024 * 1024 + 256 * 1024 * 1024),
            "3.25G"
        );
        assert_eq!(human_bytes(1 << 50), "1.00P");
        assert_eq!(human_bytes(u64::MAX), format!("{}B", u64::MAX));
    }

    #[test]
    fn cpu_time_prints_six_decimals() {
        assert_eq!(CpuTime { sec: 3, usec: 42 }.to_string(), "3.000042");
        let usage = cpu_usage();
        assert!(usage.user.usec < 1_000_000 && usage.sys.usec < 1_000_000);
    }
}
