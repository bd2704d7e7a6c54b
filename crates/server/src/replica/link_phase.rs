//! The link's phase, as INFO replication reports it.

use std::time::Instant;

use super::replica_state::LinkPhase;
use crate::state::Shared;

/// Sets the link's phase.
pub(crate) fn phase(shared: &Shared, phase: LinkPhase) {
    let mut st = shared.replica.state.lock();
    if phase == LinkPhase::Up {
        st.down_since = None;
        st.last_error = None;
    } else if st.phase == LinkPhase::Up {
        st.down_since = Some(Instant::now());
    }
    st.phase = phase;
    st.last_io = Some(Instant::now());
}
