//! The analysis as text tables, for people.

use std::io::{self, Write};

use super::analysis::{Analysis, KeyStats, Totals};

/// Bytes in binary units, as Redis tools print them (`12 B`, `3.4 KiB`).
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut v = n as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.1} {}", UNITS[unit])
}

fn totals_line(out: &mut dyn Write, name: &str, t: &Totals) -> io::Result<()> {
    writeln!(
        out,
        "  {name:<24} {:>12} {:>14} {:>12}",
        t.keys,
        t.elements,
        human_bytes(t.bytes)
    )
}

fn keys_table(out: &mut dyn Write, title: &str, keys: &[KeyStats]) -> io::Result<()> {
    writeln!(out, "{title}")?;
    writeln!(
        out,
        "  {:<40} {:<6} {:>12} {:>12}",
        "key", "type", "elements", "bytes"
    )?;
    for k in keys {
        writeln!(
            out,
            "  {:<40} {:<6} {:>12} {:>12}",
            k.key,
            k.type_name,
            k.elements,
            human_bytes(k.bytes)
        )?;
    }
    Ok(())
}

impl Analysis {
    /// Writes the analysis as tables.
    pub fn write_table(&self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(
            out,
            "{} store: {} live keys, {} elements, {} stored",
            self.format,
            self.total.keys,
            self.total.elements,
            human_bytes(self.total.bytes)
        )?;
        if self.unreadable_keys > 0 {
            writeln!(
                out,
                "{} keys whose metadata does not decode (redcodec check names them)",
                self.unreadable_keys
            )?;
        }
        writeln!(out)?;
        let header = |out: &mut dyn Write, title: &str| {
            writeln!(
                out,
                "{title}\n  {:<24} {:>12} {:>14} {:>12}",
                "", "keys", "elements", "bytes"
            )
        };
        header(out, "by type")?;
        for (name, t) in &self.by_type {
            totals_line(out, name, t)?;
        }
        writeln!(out)?;
        header(out, "by prefix")?;
        let mut prefixes: Vec<_> = self.by_prefix.iter().collect();
        prefixes.sort_by(|a, b| b.1.bytes.cmp(&a.1.bytes).then_with(|| a.0.cmp(b.0)));
        for (name, t) in prefixes {
            totals_line(out, name, t)?;
        }
        writeln!(out)?;
        keys_table(out, "biggest keys by bytes", &self.top_by_bytes)?;
        writeln!(out)?;
        keys_table(out, "biggest keys by elements", &self.top_by_elements)?;
        writeln!(out)?;
        writeln!(out, "time to live")?;
        writeln!(out, "  {:<24} {:>12}", "none", self.no_ttl)?;
        for b in &self.ttl {
            writeln!(out, "  {:<24} {:>12}", b.label, b.keys)?;
        }
        writeln!(out)?;
        writeln!(out, "stale records (not yet removed by compaction)")?;
        if self.stale.is_empty() {
            writeln!(out, "  none")?;
        } else {
            writeln!(
                out,
                "  {:<28} {:>10} {:>10} {:>10} {:>12}",
                "column family", "metadata", "elements", "orphans", "bytes"
            )?;
            for s in &self.stale {
                writeln!(
                    out,
                    "  {:<28} {:>10} {:>10} {:>10} {:>12}",
                    s.family,
                    s.meta_records,
                    s.element_records,
                    s.orphan_records,
                    human_bytes(s.bytes)
                )?;
            }
        }
        writeln!(out)?;
        writeln!(out, "column families")?;
        writeln!(
            out,
            "  {:<28} {:>12} {:>12} {:>14}  levels (files, bytes)",
            "column family", "sst", "memtable", "keys (est.)"
        )?;
        for f in &self.families {
            let levels: Vec<String> = f
                .levels
                .iter()
                .map(|l| format!("L{}: {}, {}", l.level, l.files, human_bytes(l.bytes)))
                .collect();
            writeln!(
                out,
                "  {:<28} {:>12} {:>12} {:>14}  {}",
                f.family,
                human_bytes(f.sst_bytes),
                human_bytes(f.memtable_bytes),
                f.estimated_keys,
                levels.join("; ")
            )?;
        }
        Ok(())
    }
}
