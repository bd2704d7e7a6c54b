//! How `redcodec serve` starts following a master (a leaf:
//! [`crate::config`] holds it).

/// How `redcodec serve` starts following a master.
#[derive(Clone, Debug, Default)]
pub struct ReplicaOptions {
    /// `--replicaof HOST:PORT`: follow this master from the start.
    pub replicaof: Option<(String, u16)>,
    /// `--masterauth PASS`: the password sent to the master (AUTH).
    pub masterauth: Option<String>,
}
