//! A measured figure and, when it was measured more than once, its spread:
//! the lowest and highest of the rounds or samples. Charts draw a spread as
//! a whisker; a goal whose threshold lies inside a spread is within noise.

/// The lowest and highest of several measurements of one figure.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Spread {
    /// The lowest measurement.
    pub min: f64,
    /// The highest measurement.
    pub max: f64,
}

/// A figure: the value the tables show (one pass, or the median of several)
/// and its spread when there were several measurements.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Figure {
    /// The value reported.
    pub value: f64,
    /// Lowest and highest measurement; `None` after a single one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spread: Option<Spread>,
}

impl Figure {
    /// A figure measured once.
    pub fn one(value: f64) -> Figure {
        Figure {
            value,
            spread: None,
        }
    }

    /// The median of `samples` with their spread (none for a single sample).
    /// `samples` must not be empty.
    pub fn of_samples(samples: &[f64]) -> Figure {
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        let value = sorted[sorted.len() / 2];
        let spread = (sorted.len() > 1).then(|| Spread {
            min: sorted[0],
            max: sorted[sorted.len() - 1],
        });
        Figure { value, spread }
    }

    /// The lowest value the figure may take (the value when measured once).
    pub fn lo(&self) -> f64 {
        self.spread.map_or(self.value, |s| s.min)
    }

    /// The highest value the figure may take (the value when measured once).
    pub fn hi(&self) -> f64 {
        self.spread.map_or(self.value, |s| s.max)
    }

    /// `self / base`; the spread covers every quotient of the two spreads
    /// (lowest over highest to highest over lowest), none if neither has one.
    pub fn ratio(self, base: Figure) -> Figure {
        let div = |a: f64, b: f64| a / b.max(1e-12);
        Figure {
            value: div(self.value, base.value),
            spread: (self.spread.is_some() || base.spread.is_some()).then(|| Spread {
                min: div(self.lo(), base.hi()),
                max: div(self.hi(), base.lo()),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_give_the_median_and_the_extremes() {
        let f = Figure::of_samples(&[5.0, 1.0, 3.0, 9.0, 4.0]);
        assert_eq!(f.value, 4.0);
        assert_eq!(f.spread, Some(Spread { min: 1.0, max: 9.0 }));
        assert_eq!(Figure::of_samples(&[2.0]).spread, None);
    }

    #[test]
    fn a_ratio_spans_the_quotients_of_both_spreads() {
        let a = Figure::of_samples(&[8.0, 10.0, 12.0]);
        let b = Figure::one(2.0);
        let r = a.ratio(b);
        assert_eq!((r.value, r.lo(), r.hi()), (5.0, 4.0, 6.0));
        let c = Figure::of_samples(&[1.0, 2.0, 4.0]);
        let r = a.ratio(c);
        assert_eq!((r.value, r.lo(), r.hi()), (5.0, 2.0, 12.0));
        assert_eq!(Figure::one(3.0).ratio(Figure::one(2.0)).spread, None);
    }
}
