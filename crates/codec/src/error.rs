//! Errors of encoding and decoding.

use thiserror::Error;

use crate::DataType;

/// Bytes that are not a valid record of the format.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum DecodeError {
    /// The record ends before a field it must contain.
    #[error("corrupt {record}: needs {needed} more bytes at offset {offset}, has {available}")]
    Truncated {
        /// What was being decoded.
        record: &'static str,
        /// Offset of the field.
        offset: usize,
        /// Bytes the field needs.
        needed: usize,
        /// Bytes left.
        available: usize,
    },
    /// A type tag the format does not define or redcodec does not support.
    #[error("corrupt {record}: unknown type tag {tag:#04x}")]
    UnknownType {
        /// What was being decoded.
        record: &'static str,
        /// The tag found.
        tag: u8,
    },
    /// A type the real system has and redcodec does not model (Kvrocks'
    /// bitmaps, streams, JSON, …): the record is valid, its value cannot be
    /// read.
    #[error("{record} of a {type_name}, a type redcodec does not model")]
    Unmodelled {
        /// What was being decoded.
        record: &'static str,
        /// The real system's name of the type.
        type_name: &'static str,
    },
    /// Any other violation of the format.
    #[error("corrupt {record}: {reason}")]
    Invalid {
        /// What was being decoded.
        record: &'static str,
        /// What is wrong.
        reason: String,
    },
}

/// A logical value the format cannot store.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum EncodeError {
    /// The key is longer than the format allows for its type.
    #[error(
        "key is {len} bytes; the {format} format stores at most {max} bytes in a {type_name} key"
    )]
    KeyTooLong {
        /// Format name.
        format: &'static str,
        /// Redis type name.
        type_name: &'static str,
        /// Key length.
        len: usize,
        /// Largest length allowed.
        max: usize,
    },
    /// A number outside the range the format can store.
    #[error("{what} {value} is out of range for the {format} format ({range})")]
    OutOfRange {
        /// Format name.
        format: &'static str,
        /// What the number is.
        what: &'static str,
        /// The number.
        value: String,
        /// The range allowed.
        range: String,
    },
}

impl EncodeError {
    /// Refuses a key of `data_type` longer than `max` bytes, which
    /// `format` cannot store: [`EncodeError::KeyTooLong`].
    pub fn check_key_len(
        format: &'static str,
        data_type: DataType,
        key: &[u8],
        max: usize,
    ) -> Result<(), EncodeError> {
        if key.len() > max {
            return Err(EncodeError::KeyTooLong {
                format,
                type_name: data_type.redis_name(),
                len: key.len(),
                max,
            });
        }
        Ok(())
    }

    /// [`EncodeError::OutOfRange`]: `what` = `value` is outside `range` in
    /// `format`.
    pub fn out_of_range(
        format: &'static str,
        what: &'static str,
        value: impl ToString,
        range: &str,
    ) -> EncodeError {
        EncodeError::OutOfRange {
            format,
            what,
            value: value.to_string(),
            range: range.to_string(),
        }
    }
}
