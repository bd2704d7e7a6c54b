//! The sizes a migration with a server works in, and the walk of a
//! store's keys a page at a time.

use redcodec_engine::CmdError;

use crate::error::MigrateError;

/// Elements per write command and per read of a big value.
pub const CHUNK: usize = 1000;

/// Keys per page: of a store's walk, and `SCAN`'s `COUNT`.
pub const PAGE: usize = 1000;

/// Calls `visit` with each page of a store's keys after `after`, as
/// `read` pages them (`summaries_after`, `keys_after`), up to the last key.
pub fn for_each_page<T>(
    mut after: Option<Vec<u8>>,
    mut read: impl FnMut(Option<&[u8]>) -> Result<Vec<(Vec<u8>, T)>, CmdError>,
    mut visit: impl FnMut(Vec<(Vec<u8>, T)>) -> Result<(), MigrateError>,
) -> Result<(), MigrateError> {
    loop {
        let page = read(after.as_deref())?;
        let Some((last, _)) = page.last() else {
            return Ok(());
        };
        after = Some(last.clone());
        visit(page)?;
    }
}
