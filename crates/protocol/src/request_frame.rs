//! Where a request lies in the bytes it arrived in: its arguments' spans
//! (or an inline line's words) and the bytes it takes, found by
//! [`crate::parse`] before any argument is copied or taken.

use std::ops::Range;

use bytes::{Bytes, BytesMut};

use crate::Request;

/// Where the first request of a buffer lies: its arguments and the bytes
/// it takes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    pub(crate) args: FrameArgs,
    pub(crate) used: usize,
}

/// A request's arguments: the spans of a multibulk's payloads in the
/// buffer, or the words of an inline line (unquoted, so no longer spans).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum FrameArgs {
    Spans(Vec<Range<usize>>),
    Words(Vec<Vec<u8>>),
}

impl Frame {
    /// An inline request's frame: its words, and the bytes it took.
    pub(crate) fn words(words: Vec<Vec<u8>>, used: usize) -> Frame {
        Frame {
            args: FrameArgs::Words(words),
            used,
        }
    }

    /// How many bytes from the start of the buffer the request takes.
    pub fn used(&self) -> usize {
        self.used
    }

    /// How many arguments it has (0: a blank line or `*0`, which Redis
    /// skips).
    pub fn len(&self) -> usize {
        match &self.args {
            FrameArgs::Spans(spans) => spans.len(),
            FrameArgs::Words(words) => words.len(),
        }
    }

    /// Whether it has no argument.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Its first argument (the command's name), read from `buf`, the
    /// buffer it was found in.
    pub fn name<'a>(&'a self, buf: &'a [u8]) -> Option<&'a [u8]> {
        match &self.args {
            FrameArgs::Spans(spans) => spans.first().map(|s| &buf[s.clone()]),
            FrameArgs::Words(words) => words.first().map(Vec::as_slice),
        }
    }

    /// Takes the request out of the front of `buf`, the buffer it was
    /// found in: a multibulk's arguments are slices of the bytes taken.
    pub fn take(self, buf: &mut BytesMut) -> Request {
        let taken = buf.split_to(self.used).freeze();
        let args = match self.args {
            FrameArgs::Spans(spans) => spans.into_iter().map(|s| taken.slice(s)).collect(),
            FrameArgs::Words(words) => words.into_iter().map(Bytes::from).collect(),
        };
        Request { args }
    }

    /// The request, its arguments copied out of `buf`, the buffer it was
    /// found in.
    pub fn copy(self, buf: &[u8]) -> Request {
        let args = match self.args {
            FrameArgs::Spans(spans) => spans
                .into_iter()
                .map(|s| Bytes::copy_from_slice(&buf[s]))
                .collect(),
            FrameArgs::Words(words) => words.into_iter().map(Bytes::from).collect(),
        };
        Request { args }
    }
}
