//! Kvrocks' number and slot-range parsing (`src/common/parse_util.h`,
//! `CommandTable::ParseSlotRanges` in `src/commands/commander.cc`), with
//! its error texts.

use std::fmt;

/// Number of cluster slots.
pub const SLOTS: usize = 16384;

/// Slots `start..=end`, both in `0..16384`, `start <= end`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotRange {
    /// First slot.
    pub start: u16,
    /// Last slot (included).
    pub end: u16,
}

impl SlotRange {
    /// One slot.
    pub fn point(slot: u16) -> SlotRange {
        SlotRange {
            start: slot,
            end: slot,
        }
    }

    /// Whether `slot` is in the range.
    pub fn contains(&self, slot: u16) -> bool {
        (self.start..=self.end).contains(&slot)
    }

    /// Whether the two ranges share a slot.
    pub fn overlaps(&self, other: &SlotRange) -> bool {
        self.end >= other.start && other.end >= self.start
    }

    /// Every slot of the range.
    pub fn slots(&self) -> impl Iterator<Item = u16> {
        self.start..=self.end
    }
}

impl fmt::Display for SlotRange {
    /// `5` or `5-9`, as Kvrocks' `SlotRange::String`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.start == self.end {
            write!(f, "{}", self.start)
        } else {
            write!(f, "{}-{}", self.start, self.end)
        }
    }
}

/// Kvrocks' `ParseInt<T>(v, 10)` as `i64` then checked to fit
/// `min..=max` of the target type (strtoll: leading white space and a
/// sign allowed, the whole string must be used), with its error texts.
pub fn parse_int(v: &[u8], min: i64, max: i64) -> Result<i64, &'static str> {
    let s = std::str::from_utf8(v).map_err(|_| "not started as an integer")?;
    let trimmed = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let (negative, digits) = match trimmed.as_bytes().first() {
        Some(b'-') => (true, &trimmed[1..]),
        Some(b'+') => (false, &trimmed[1..]),
        _ => (false, trimmed),
    };
    let len = digits.bytes().take_while(u8::is_ascii_digit).count();
    if len == 0 {
        return Err("not started as an integer");
    }
    let mut value: i64 = 0;
    for b in digits[..len].bytes() {
        let d = i64::from(b - b'0');
        value = match value.checked_mul(10).and_then(|v| {
            if negative {
                v.checked_sub(d)
            } else {
                v.checked_add(d)
            }
        }) {
            Some(v) => v,
            None => return Err("Numerical result out of range"),
        };
    }
    if value < min || value > max {
        return Err("out of range of integer type");
    }
    if len != digits.len() {
        return Err("encounter non-integer characters");
    }
    Ok(value)
}

/// [`parse_int`] then a check against `lo..=hi` (`NumericRange`).
pub fn parse_int_in(v: &[u8], ty: (i64, i64), lo: i64, hi: i64) -> Result<i64, &'static str> {
    let n = parse_int(v, ty.0, ty.1)?;
    if n < lo || n > hi {
        return Err("out of numeric range");
    }
    Ok(n)
}

const INT: (i64, i64) = (i32::MIN as i64, i32::MAX as i64);

fn parse_slot(v: &str) -> Result<u16, &'static str> {
    parse_int_in(v.as_bytes(), INT, 0, SLOTS as i64 - 1).map(|n| n as u16)
}

/// Kvrocks' `ParseSlotRanges`: slots and `a-b` ranges separated by
/// spaces (`"5 7-9"`).
pub fn parse_slot_ranges(text: &[u8]) -> Result<Vec<SlotRange>, String> {
    if text.is_empty() {
        return Err("No slots to parse.".into());
    }
    let text = String::from_utf8_lossy(text);
    let parts: Vec<&str> = text.split(' ').filter(|p| !p.is_empty()).collect();
    if parts.is_empty() {
        return Err(format!(
            "Invalid slots: `{text}`. No slots to parse. Please use spaces to separate slots."
        ));
    }
    let mut ranges = Vec::with_capacity(parts.len());
    for part in parts {
        if !part.contains('-') {
            let slot = parse_slot(part).map_err(|e| format!("Invalid slot id: {e}"))?;
            ranges.push(SlotRange::point(slot));
            continue;
        }
        if part.starts_with('-') || part.ends_with('-') {
            return Err(format!(
                "Invalid slot range: `{part}`. The character '-' can't appear in the first or last position."
            ));
        }
        let fields: Vec<&str> = part.split('-').filter(|p| !p.is_empty()).collect();
        if fields.len() != 2 {
            return Err(format!(
                "Invalid slot range: `{part}`. The slot range should be of the form `int1-int2`."
            ));
        }
        match (parse_slot(fields[0]), parse_slot(fields[1])) {
            (Ok(start), Ok(end)) if start <= end => ranges.push(SlotRange { start, end }),
            _ => {
                return Err(format!(
                    "Invalid slot range: `{part}`. The slot range `int1-int2` needs to satisfy the condition (int1 <= int2)."
                ))
            }
        }
    }
    Ok(ranges)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ints_as_kvrocks_parses_them() {
        assert_eq!(parse_int(b"12", 0, 100), Ok(12));
        assert_eq!(parse_int(b" -3", -10, 10), Ok(-3));
        assert_eq!(parse_int(b"", 0, 1), Err("not started as an integer"));
        assert_eq!(parse_int(b"x1", 0, 1), Err("not started as an integer"));
        assert_eq!(
            parse_int(b"1x", 0, 1),
            Err("encounter non-integer characters")
        );
        assert_eq!(
            parse_int(b"70000", 0, 65535),
            Err("out of range of integer type")
        );
        assert_eq!(
            parse_int_in(b"16384", INT, 0, 16383),
            Err("out of numeric range")
        );
    }

    #[test]
    fn slot_ranges() {
        assert_eq!(
            parse_slot_ranges(b"5 7-9").unwrap(),
            vec![SlotRange::point(5), SlotRange { start: 7, end: 9 }]
        );
        assert_eq!(
            parse_slot_ranges(b"3-3").unwrap(),
            vec![SlotRange::point(3)]
        );
        assert_eq!(parse_slot_ranges(b"").unwrap_err(), "No slots to parse.");
        assert_eq!(
            parse_slot_ranges(b"16384").unwrap_err(),
            "Invalid slot id: out of numeric range"
        );
        assert!(parse_slot_ranges(b"9-7")
            .unwrap_err()
            .ends_with("needs to satisfy the condition (int1 <= int2)."));
        assert!(parse_slot_ranges(b"-7")
            .unwrap_err()
            .contains("first or last"));
        assert_eq!(SlotRange { start: 1, end: 4 }.to_string(), "1-4");
    }
}
