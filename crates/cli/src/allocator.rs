//! The process' memory allocator.

/// mimalloc instead of the system allocator: copying a store allocates
/// for every element, and glibc's malloc cost a third of the CPU time of a
/// migration.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The global allocator's name, as `redcodec serve`'s INFO reports it
/// (`mem_allocator`).
pub const ALLOCATOR: &str = "mimalloc";
