//! A replica's store holds background expiry: its master decides when a
//! key expires. While held, a full compaction drops no record of a key
//! whose TTL passed by this machine's clock, on any format, and the
//! active-expiry pass (ardb) deletes nothing; once released, both do as
//! before.

mod common;

use common::Fixture;
use redcodec::formats::Format;

/// A string and a hash that expire 1 s after T0, a key that does not, and
/// the clock 10 minutes later (past Kvrocks' grace for element records).
fn expired_by_the_clock(format: Format) -> Fixture {
    let f = Fixture::new(format);
    f.run_ok(&[
        "SET s v PX 1000",
        "HSET h f 1 g 2",
        "PEXPIRE h 1000",
        "SET keep v",
    ]);
    f.clock.advance_ms(600_000);
    f
}

/// Compacts, then runs an active-expiry pass; the keys it deleted.
fn compact_and_expire(f: &Fixture) -> usize {
    f.engine.compact().unwrap();
    f.engine.expire_reported_keys().unwrap()
}

#[test]
fn a_held_store_keeps_every_record_of_keys_expired_by_its_clock() {
    for &format in Format::ALL {
        let mut f = expired_by_the_clock(format);
        // The test runs the passes itself.
        f.engine.stop_expiry_task();
        let before = f.dump();
        let hold = f.engine.store().expiry_hold();
        hold.set(true);
        assert_eq!(compact_and_expire(&f), 0, "{format}");
        assert_eq!(f.dump(), before, "{format}: held, nothing goes");
        // Reads still judge by the clock: the keys are expired to clients.
        assert_eq!(f.run("EXISTS s h").to_cli_string(), "(integer) 0");

        hold.set(false);
        compact_and_expire(&f);
        f.engine.compact().unwrap();
        let only_keep = Fixture::new(format);
        only_keep.run_ok(&["SET keep v"]);
        assert_eq!(
            f.dump().lines().count(),
            only_keep.dump().lines().count(),
            "{format}: released, the expired keys' records go:\n{}",
            f.dump()
        );
        assert_eq!(f.run("GET keep").to_cli_string(), "\"v\"");
    }
}
