//! Redis' geohash (`geohash.c`, `geohash_helper.c`): a longitude and
//! latitude as the 52-bit interleaved integer a GEO sorted set keeps as a
//! member's score, decoded back to the centre of its cell, the distance
//! between two points on Redis' sphere, and the 11-character standard
//! geohash GEOHASH prints. Pure arithmetic, in Redis' order of floating
//! point operations, so every reply matches redis-server's digits.

/// The latitudes Redis can index (EPSG:900913 / EPSG:3785).
pub const LAT_MIN: f64 = -85.05112878;
/// See [`LAT_MIN`].
pub const LAT_MAX: f64 = 85.05112878;
/// The longitudes Redis can index.
pub const LONG_MIN: f64 = -180.0;
/// See [`LONG_MIN`].
pub const LONG_MAX: f64 = 180.0;
/// Bits per coordinate of a stored score: 26 (52 in all).
pub const STEP_MAX: u8 = 26;
/// Earth's quadratic mean radius for WGS-84, Redis' constant.
pub const EARTH_RADIUS_IN_METERS: f64 = 6372797.560856;

/// A range of one coordinate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Range {
    /// Its lower bound.
    pub min: f64,
    /// Its upper bound.
    pub max: f64,
}

/// Redis' ranges: longitude, latitude.
pub const WGS84: (Range, Range) = (
    Range {
        min: LONG_MIN,
        max: LONG_MAX,
    },
    Range {
        min: LAT_MIN,
        max: LAT_MAX,
    },
);

/// A cell: the bits of its hash, at `step` bits per coordinate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hash {
    /// The interleaved bits (latitude in the even bits).
    pub bits: u64,
    /// Bits per coordinate.
    pub step: u8,
}

/// The longitudes and latitudes a cell covers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Area {
    /// Its longitudes.
    pub longitude: Range,
    /// Its latitudes.
    pub latitude: Range,
}

fn interleave64(xlo: u32, ylo: u32) -> u64 {
    const B: [u64; 5] = [
        0x5555555555555555,
        0x3333333333333333,
        0x0F0F0F0F0F0F0F0F,
        0x00FF00FF00FF00FF,
        0x0000FFFF0000FFFF,
    ];
    const S: [u32; 5] = [1, 2, 4, 8, 16];
    let mut x = u64::from(xlo);
    let mut y = u64::from(ylo);
    for i in (0..5).rev() {
        x = (x | (x << S[i])) & B[i];
        y = (y | (y << S[i])) & B[i];
    }
    x | (y << 1)
}

fn deinterleave64(interleaved: u64) -> u64 {
    const B: [u64; 6] = [
        0x5555555555555555,
        0x3333333333333333,
        0x0F0F0F0F0F0F0F0F,
        0x00FF00FF00FF00FF,
        0x0000FFFF0000FFFF,
        0x00000000FFFFFFFF,
    ];
    const S: [u32; 6] = [0, 1, 2, 4, 8, 16];
    let mut x = interleaved;
    let mut y = interleaved >> 1;
    for i in 0..6 {
        x = (x | (x >> S[i])) & B[i];
        y = (y | (y >> S[i])) & B[i];
    }
    x | (y << 32)
}

/// The cell of a point within `ranges` (longitude, latitude), at `step`
/// bits per coordinate (`geohashEncode`); `None` outside Redis' limits.
pub fn encode(ranges: (Range, Range), longitude: f64, latitude: f64, step: u8) -> Option<Hash> {
    let (long_range, lat_range) = ranges;
    if step > 32 || step == 0 {
        return None;
    }
    if !(LONG_MIN..=LONG_MAX).contains(&longitude) || !(LAT_MIN..=LAT_MAX).contains(&latitude) {
        return None;
    }
    if latitude < lat_range.min
        || latitude > lat_range.max
        || longitude < long_range.min
        || longitude > long_range.max
    {
        return None;
    }
    let mut lat_offset = (latitude - lat_range.min) / (lat_range.max - lat_range.min);
    let mut long_offset = (longitude - long_range.min) / (long_range.max - long_range.min);
    let scale = (1u64 << step) as f64;
    lat_offset *= scale;
    long_offset *= scale;
    // C's conversion of a double to uint32_t: truncation.
    Some(Hash {
        bits: interleave64(lat_offset as u32, long_offset as u32),
        step,
    })
}

/// A hash's bits as a 52-bit score (`geohashAlign52Bits`).
pub fn align52(hash: Hash) -> u64 {
    hash.bits << (52 - u32::from(hash.step) * 2)
}

/// The score a point gets in a GEO sorted set; `None` outside the
/// limits.
pub fn score_of(longitude: f64, latitude: f64) -> Option<u64> {
    encode(WGS84, longitude, latitude, STEP_MAX).map(align52)
}

/// The area of a cell (`geohashDecode`); `None` for the zero hash.
pub fn decode(ranges: (Range, Range), hash: Hash) -> Option<Area> {
    if hash.bits == 0 && hash.step == 0 {
        return None;
    }
    let (long_range, lat_range) = ranges;
    let separated = deinterleave64(hash.bits);
    let lat_scale = lat_range.max - lat_range.min;
    let long_scale = long_range.max - long_range.min;
    let ilato = separated as u32;
    let ilono = (separated >> 32) as u32;
    let cells = (1u64 << hash.step) as f64;
    Some(Area {
        latitude: Range {
            min: lat_range.min + (f64::from(ilato) * 1.0 / cells) * lat_scale,
            max: lat_range.min + ((f64::from(ilato) + 1.0) * 1.0 / cells) * lat_scale,
        },
        longitude: Range {
            min: long_range.min + (f64::from(ilono) * 1.0 / cells) * long_scale,
            max: long_range.min + ((f64::from(ilono) + 1.0) * 1.0 / cells) * long_scale,
        },
    })
}

/// A stored score's point: the centre of its cell, clamped to the limits
/// (`decodeGeohash`). Any score is some cell: Redis converts it to an
/// unsigned 64-bit integer as x86-64 does ([`x86_to_u64`]).
pub fn point_of(score: f64) -> Option<(f64, f64)> {
    let area = decode(
        WGS84,
        Hash {
            bits: x86_to_u64(score),
            step: STEP_MAX,
        },
    )?;
    let x = ((area.longitude.min + area.longitude.max) / 2.0).clamp(LONG_MIN, LONG_MAX);
    let y = ((area.latitude.min + area.latitude.max) / 2.0).clamp(LAT_MIN, LAT_MAX);
    Some((x, y))
}

/// C's `(uint64_t)` of a double as gcc compiles it for x86-64: below
/// 2^63 a signed conversion (`cvttsd2si`: negative values wrap, NaN and
/// values out of range give 2^63), from 2^63 on the signed conversion of
/// the value less 2^63 with the top bit flipped.
pub fn x86_to_u64(value: f64) -> u64 {
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    const INDEFINITE: u64 = 1 << 63;
    let signed = |v: f64| {
        if v.is_nan() || !(-TWO_63..TWO_63).contains(&v) {
            INDEFINITE
        } else {
            v as i64 as u64
        }
    };
    if value >= TWO_63 {
        signed(value - TWO_63) ^ INDEFINITE
    } else {
        signed(value)
    }
}

fn deg_rad(angle: f64) -> f64 {
    angle * (std::f64::consts::PI / 180.0)
}

/// The distance in meters between two latitudes on one meridian.
pub fn lat_distance(lat1: f64, lat2: f64) -> f64 {
    EARTH_RADIUS_IN_METERS * (deg_rad(lat2) - deg_rad(lat1)).abs()
}

/// The haversine distance in meters (`geohashGetDistance`).
pub fn distance(lon1: f64, lat1: f64, lon2: f64, lat2: f64) -> f64 {
    let lon1r = deg_rad(lon1);
    let lon2r = deg_rad(lon2);
    let v = ((lon2r - lon1r) / 2.0).sin();
    if v == 0.0 {
        return lat_distance(lat1, lat2);
    }
    let lat1r = deg_rad(lat1);
    let lat2r = deg_rad(lat2);
    let u = ((lat2r - lat1r) / 2.0).sin();
    let a = u * u + lat1r.cos() * lat2r.cos() * v * v;
    2.0 * EARTH_RADIUS_IN_METERS * a.sqrt().asin()
}

/// The standard 11-character geohash of a point (re-encoded over
/// latitudes -90..90, the last character always `0`), as GEOHASH prints.
pub fn standard_string(longitude: f64, latitude: f64) -> String {
    const ALPHABET: &[u8; 32] = b"0123456789bcdefghjkmnpqrstuvwxyz";
    let ranges = (
        Range {
            min: -180.0,
            max: 180.0,
        },
        Range {
            min: -90.0,
            max: 90.0,
        },
    );
    // Redis ignores a failure here (bits stay 0).
    let bits = encode(ranges, longitude, latitude, 26).map_or(0, |h| h.bits);
    (0..11)
        .map(|i| {
            let index = if i == 10 {
                0
            } else {
                ((bits >> (52 - (i + 1) * 5)) & 0x1f) as usize
            };
            char::from(ALPHABET[index])
        })
        .collect()
}

/// A search shape: a circle (radius) or a box (width, height), in the
/// unit `conversion` converts to meters, around `center` (longitude,
/// latitude).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Shape {
    /// Within a radius.
    Radius(f64),
    /// Within a box: width, height.
    Box(f64, f64),
}

/// A search: the shape, its centre and the unit's meters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Search {
    /// The shape.
    pub shape: Shape,
    /// Its centre: longitude, latitude.
    pub center: (f64, f64),
    /// Meters per unit of the shape's sizes.
    pub conversion: f64,
}

const MERCATOR_MAX: f64 = 20037726.37;

fn rad_deg(angle: f64) -> f64 {
    angle / (std::f64::consts::PI / 180.0)
}

/// The step whose cells cover a search of `range_meters` at `latitude`
/// (`geohashEstimateStepsByRadius`).
fn estimate_steps(mut range_meters: f64, latitude: f64) -> u8 {
    if range_meters == 0.0 {
        return 26;
    }
    let mut step: i32 = 1;
    while range_meters < MERCATOR_MAX {
        range_meters *= 2.0;
        step += 1;
    }
    step -= 2;
    if !(-66.0..=66.0).contains(&latitude) {
        step -= 1;
        if !(-80.0..=80.0).contains(&latitude) {
            step -= 1;
        }
    }
    step.clamp(1, 26) as u8
}

impl Search {
    /// The search's bounding box: min longitude, min latitude, max
    /// longitude, max latitude (`geohashBoundingBox`).
    fn bounds(&self) -> [f64; 4] {
        let (longitude, latitude) = self.center;
        let (height, width) = match self.shape {
            Shape::Radius(r) => (self.conversion * r, self.conversion * r),
            Shape::Box(w, h) => (self.conversion * (h / 2.0), self.conversion * (w / 2.0)),
        };
        let lat_delta = rad_deg(height / EARTH_RADIUS_IN_METERS);
        let long_delta_top =
            rad_deg(width / EARTH_RADIUS_IN_METERS / deg_rad(latitude + lat_delta).cos());
        let long_delta_bottom =
            rad_deg(width / EARTH_RADIUS_IN_METERS / deg_rad(latitude - lat_delta).cos());
        let southern = latitude < 0.0;
        [
            if southern {
                longitude - long_delta_bottom
            } else {
                longitude - long_delta_top
            },
            latitude - lat_delta,
            if southern {
                longitude + long_delta_bottom
            } else {
                longitude + long_delta_top
            },
            latitude + lat_delta,
        ]
    }

    /// The cells to read, in Redis' order (the centre's, then north,
    /// south, east, west, north-east, north-west, south-east, south-west),
    /// `None` for a neighbour the search cannot reach
    /// (`geohashCalculateAreasByShapeWGS84`).
    pub fn cells(&self) -> [Option<Hash>; 9] {
        let [min_lon, min_lat, max_lon, max_lat] = self.bounds();
        let (longitude, latitude) = self.center;
        let radius_meters = match self.shape {
            Shape::Radius(r) => r,
            Shape::Box(w, h) => ((w / 2.0) * (w / 2.0) + (h / 2.0) * (h / 2.0)).sqrt(),
        } * self.conversion;
        let mut steps = estimate_steps(radius_meters, latitude);
        let at = |steps| {
            let hash = encode(WGS84, longitude, latitude, steps).unwrap_or(Hash {
                bits: 0,
                step: steps,
            });
            let area = decode(WGS84, hash);
            (hash, neighbors(hash), area)
        };
        let (mut hash, mut near, mut area) = at(steps);
        let decoded = |h: Hash| decode(WGS84, h);
        let decrease = decoded(near[0]).is_some_and(|n| n.latitude.max < max_lat)
            || decoded(near[1]).is_some_and(|s| s.latitude.min > min_lat)
            || decoded(near[2]).is_some_and(|e| e.longitude.max < max_lon)
            || decoded(near[3]).is_some_and(|w| w.longitude.min > min_lon);
        if steps > 1 && decrease {
            steps -= 1;
            (hash, near, area) = at(steps);
        }
        // north, south, east, west, north-east, north-west, south-east,
        // south-west.
        let mut keep = [true; 8];
        if let (true, Some(area)) = (steps >= 2, area) {
            if area.latitude.min < min_lat {
                for i in [1, 6, 7] {
                    keep[i] = false;
                }
            }
            if area.latitude.max > max_lat {
                for i in [0, 4, 5] {
                    keep[i] = false;
                }
            }
            if area.longitude.min < min_lon {
                for i in [3, 7, 5] {
                    keep[i] = false;
                }
            }
            if area.longitude.max > max_lon {
                for i in [2, 6, 4] {
                    keep[i] = false;
                }
            }
        }
        let mut cells = [Some(hash); 9];
        for i in 0..8 {
            cells[i + 1] = keep[i].then_some(near[i]);
        }
        cells
    }

    /// Whether the point of `score` is inside, and its distance in meters
    /// from the centre (`geoWithinShape`).
    pub fn contains(&self, score: f64) -> Option<((f64, f64), f64)> {
        let (x, y) = point_of(score)?;
        let (cx, cy) = self.center;
        match self.shape {
            Shape::Radius(r) => {
                let d = distance(cx, cy, x, y);
                (d <= r * self.conversion).then_some(((x, y), d))
            }
            Shape::Box(w, h) => {
                let (width, height) = (w * self.conversion, h * self.conversion);
                if lat_distance(y, cy) > height / 2.0 {
                    return None;
                }
                if distance(x, y, cx, y) > width / 2.0 {
                    return None;
                }
                Some(((x, y), distance(cx, cy, x, y)))
            }
        }
    }
}

/// The scores `[min, max)` of the members inside a cell
/// (`scoresOfGeoHashBox`).
pub fn score_range(hash: Hash) -> (u64, u64) {
    let next = Hash {
        bits: hash.bits.wrapping_add(1),
        step: hash.step,
    };
    (align52(hash), align52(next))
}

/// The cell `d` (±1) cells along one axis (`geohash_move_x`: the odd
/// bits, `own` = `0xaaaa…`; `geohash_move_y`: the even bits, `0x5555…`).
fn move_axis(hash: &mut Hash, d: i8, own: u64) {
    let shift = 64 - u32::from(hash.step) * 2;
    let mut moving = hash.bits & own;
    let kept = hash.bits & !own;
    let zz = !own >> shift;
    if d > 0 {
        moving = moving.wrapping_add(zz + 1);
    } else {
        moving |= zz;
        moving = moving.wrapping_sub(zz + 1);
    }
    moving &= own >> shift;
    hash.bits = moving | kept;
}

/// A cell's neighbours: north, south, east, west, north-east, north-west,
/// south-east, south-west (`geohashNeighbors`).
fn neighbors(hash: Hash) -> [Hash; 8] {
    let moved = |dx: i8, dy: i8| {
        let mut h = hash;
        if dx != 0 {
            move_axis(&mut h, dx, 0xaaaa_aaaa_aaaa_aaaa);
        }
        if dy != 0 {
            move_axis(&mut h, dy, 0x5555_5555_5555_5555);
        }
        h
    };
    [
        moved(0, 1),
        moved(0, -1),
        moved(1, 0),
        moved(-1, 0),
        moved(1, 1),
        moved(-1, 1),
        moved(1, -1),
        moved(-1, -1),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_and_points_are_redis() {
        // GEOADD Sicily 13.361389 38.115556 Palermo on redis-server 7.0.15.
        assert_eq!(score_of(13.361389, 38.115556), Some(3479099956230698));
        assert_eq!(score_of(-180.0, LAT_MIN), Some(0));
        assert_eq!(score_of(180.1, 0.0), None);
        let (x, y) = point_of(3479099956230698.0).unwrap();
        assert_eq!(standard_string(x, y), "sqc8b49rny0");
    }

    #[test]
    fn scores_convert_as_x86_64_does() {
        assert_eq!(x86_to_u64(-5.0), u64::MAX - 4);
        assert_eq!(x86_to_u64(1e30), 0);
        assert_eq!(x86_to_u64(f64::NAN), 1 << 63);
        assert_eq!(x86_to_u64(f64::NEG_INFINITY), 1 << 63);
        assert_eq!(x86_to_u64(9_223_372_036_854_775_808.0), 1 << 63);
        assert_eq!(x86_to_u64(1.5), 1);
    }
}
