//! A typed Rust API over the engine, for library users: whole values in and
//! out ([`Engine::read`], [`Engine::write`], [`Engine::keys_after`]) and
//! typed forms of the everyday commands. Each goes through the same code as
//! the command dispatcher: every command is implemented once.

use redcodec_codec::{Codec, DataType};

use crate::engine::Engine;
use crate::error::CmdError;
use crate::keyspace::Ctx;
use crate::reply::Reply;
use crate::value::{read_value, write_value, Value};
use crate::walk::KeyWalk;

/// A key and its type (`None` when its metadata is unreadable).
pub type KeyInfo = (Vec<u8>, Option<DataType>);

/// A key's value with its absolute expiry.
#[derive(Clone, Debug, PartialEq)]
pub struct Stored {
    /// The content.
    pub value: Value,
    /// Absolute expiry in unix ms; 0: none.
    pub expire_ms: u64,
}

impl<C: Codec> Engine<C> {
    /// The whole value of `key`, if it is live.
    pub fn read(&self, key: &[u8]) -> Result<Option<Stored>, CmdError> {
        let _held = self.locks.lock_keys(&[key]);
        let ctx = Ctx::new(self);
        let Some(meta) = ctx.live(key)? else {
            return Ok(None);
        };
        let value = read_value(&ctx, key, &meta)?;
        Ok(Some(Stored {
            value,
            expire_ms: meta.expire_ms,
        }))
    }

    /// Replaces `key` with `value` (any type) and the absolute expiry
    /// `expire_ms` (0: none), atomically. An empty collection deletes the key.
    pub fn write(&self, key: &[u8], value: &Value, expire_ms: u64) -> Result<(), CmdError> {
        let _held = self.locks.lock_keys(&[key]);
        let mut ctx = Ctx::new(self);
        let view = ctx.view(key)?;
        if expire_ms != 0 && expire_ms <= ctx.now_ms() {
            if let Some(live) = &view.live {
                ctx.remove_key(key, live)?;
            }
        } else {
            write_value(&mut ctx, key, &view, value, expire_ms)?;
        }
        ctx.commit()
    }

    /// Up to `limit` live keys in the store's key order, after `after`
    /// (exclusive) or from the first; with each key's type (`None` when its
    /// metadata is unreadable).
    pub fn keys_after(&self, after: Option<&[u8]>, limit: usize) -> Result<Vec<KeyInfo>, CmdError> {
        let ctx = Ctx::new(self);
        let mut walk = KeyWalk::new(&ctx, after);
        let mut out = Vec::new();
        while out.len() < limit {
            match walk.next()? {
                Some((key, meta)) => out.push((key, meta.map(|m| m.data_type))),
                None => break,
            }
        }
        Ok(out)
    }

    fn call(&self, args: &[&[u8]]) -> Result<Reply, CmdError> {
        match self.execute(args) {
            Reply::Error(e) => Err(CmdError::Other(e)),
            reply => Ok(reply),
        }
    }

    /// GET.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, CmdError> {
        match self.call(&[b"GET", key])? {
            Reply::Bulk(v) => Ok(Some(v)),
            _ => Ok(None),
        }
    }

    /// SET without options.
    pub fn set(&self, key: &[u8], value: &[u8]) -> Result<(), CmdError> {
        self.call(&[b"SET", key, value]).map(drop)
    }

    /// DEL of several keys; returns how many existed.
    pub fn del(&self, keys: &[&[u8]]) -> Result<u64, CmdError> {
        let mut args: Vec<&[u8]> = vec![b"DEL"];
        args.extend_from_slice(keys);
        integer(self.call(&args)?)
    }

    /// TYPE: the key's type, `None` when missing.
    pub fn type_of(&self, key: &[u8]) -> Result<Option<DataType>, CmdError> {
        match self.call(&[b"TYPE", key])? {
            Reply::Status(name) => Ok(DataType::from_redis_name(name.as_bytes())),
            _ => Ok(None),
        }
    }

    /// HSET of field–value pairs; returns how many fields were new.
    pub fn hset(&self, key: &[u8], pairs: &[(&[u8], &[u8])]) -> Result<u64, CmdError> {
        let mut args: Vec<&[u8]> = vec![b"HSET", key];
        for (f, v) in pairs {
            args.push(f);
            args.push(v);
        }
        integer(self.call(&args)?)
    }

    /// HGET.
    pub fn hget(&self, key: &[u8], field: &[u8]) -> Result<Option<Vec<u8>>, CmdError> {
        match self.call(&[b"HGET", key, field])? {
            Reply::Bulk(v) => Ok(Some(v)),
            _ => Ok(None),
        }
    }

    /// RPUSH; returns the new length.
    pub fn rpush(&self, key: &[u8], values: &[&[u8]]) -> Result<u64, CmdError> {
        let mut args: Vec<&[u8]> = vec![b"RPUSH", key];
        args.extend_from_slice(values);
        integer(self.call(&args)?)
    }

    /// SADD; returns how many members were new.
    pub fn sadd(&self, key: &[u8], members: &[&[u8]]) -> Result<u64, CmdError> {
        let mut args: Vec<&[u8]> = vec![b"SADD", key];
        args.extend_from_slice(members);
        integer(self.call(&args)?)
    }

    /// ZADD of (score, member) pairs; returns how many members were new.
    pub fn zadd(&self, key: &[u8], members: &[(f64, &[u8])]) -> Result<u64, CmdError> {
        let scores: Vec<String> = members.iter().map(|(s, _)| format!("{s:?}")).collect();
        let mut args: Vec<&[u8]> = vec![b"ZADD", key];
        for ((_, m), s) in members.iter().zip(&scores) {
            args.push(s.as_bytes());
            args.push(m);
        }
        integer(self.call(&args)?)
    }

    /// PEXPIRE; returns whether the key existed.
    pub fn pexpire(&self, key: &[u8], ms: u64) -> Result<bool, CmdError> {
        let ms = ms.to_string();
        Ok(integer(self.call(&[b"PEXPIRE", key, ms.as_bytes()])?)? == 1)
    }

    /// PTTL: `None` for a missing key, `Some(None)` for no expiry.
    pub fn pttl(&self, key: &[u8]) -> Result<Option<Option<u64>>, CmdError> {
        let Reply::Integer(n) = self.call(&[b"PTTL", key])? else {
            return Ok(None);
        };
        Ok(match n {
            -2 => None,
            -1 => Some(None),
            n => Some(Some(n.max(0) as u64)),
        })
    }
}

fn integer(reply: Reply) -> Result<u64, CmdError> {
    match reply {
        Reply::Integer(n) => Ok(n.max(0) as u64),
        other => Err(CmdError::Other(format!("unexpected reply {other}"))),
    }
}

#[cfg(test)]
mod tests {
    use crate::cmd::testkit::TestEngine;
    use crate::value::Value;
    use redcodec_codec::DataType;

    #[test]
    fn whole_values_round_trip_through_read_and_write() {
        let t = TestEngine::new();
        let e = &t.engine;
        let values = [
            Value::String(b"v\x00\xff".to_vec()),
            Value::Hash(vec![
                (b"f".to_vec(), b"1".to_vec()),
                (b"g".to_vec(), b"2".to_vec()),
            ]),
            Value::List(vec![b"a".to_vec(), b"b".to_vec(), b"a".to_vec()]),
            Value::Set(vec![b"x".to_vec(), b"y".to_vec()]),
            Value::ZSet(vec![(b"m".to_vec(), -1.5), (b"n".to_vec(), 2.0)]),
        ];
        for (i, v) in values.iter().enumerate() {
            let key = format!("k{i}").into_bytes();
            e.write(&key, v, 0).unwrap();
            let stored = e.read(&key).unwrap().unwrap();
            assert_eq!(&stored.value, v);
            assert_eq!(stored.expire_ms, 0);
            assert_eq!(e.type_of(&key).unwrap(), Some(v.data_type()));
        }
        // Overwrite a hash with a list: the old fields must not leak.
        e.write(b"k1", &Value::List(vec![b"z".to_vec()]), 0)
            .unwrap();
        assert_eq!(
            e.read(b"k1").unwrap().unwrap().value,
            Value::List(vec![b"z".to_vec()])
        );
        let keys = e.keys_after(None, 100).unwrap();
        assert_eq!(keys.len(), 5);
        assert_eq!(e.keys_after(Some(b"k2"), 100).unwrap().len(), 2);
    }

    #[test]
    fn typed_commands_and_expiry() {
        let t = TestEngine::new();
        let e = &t.engine;
        e.set(b"s", b"1").unwrap();
        assert_eq!(e.get(b"s").unwrap(), Some(b"1".to_vec()));
        assert_eq!(e.hset(b"h", &[(b"f", b"v")]).unwrap(), 1);
        assert_eq!(e.hget(b"h", b"f").unwrap(), Some(b"v".to_vec()));
        assert!(e.hget(b"s", b"f").is_err(), "WRONGTYPE is an error");
        assert_eq!(e.zadd(b"z", &[(0.1, b"a")]).unwrap(), 1);
        assert_eq!(e.type_of(b"z").unwrap(), Some(DataType::ZSet));
        assert!(e.pexpire(b"s", 1000).unwrap());
        assert_eq!(e.pttl(b"s").unwrap(), Some(Some(1000)));
        t.clock.advance_ms(1001);
        assert_eq!(e.get(b"s").unwrap(), None);
        assert_eq!(e.del(&[b"h", b"nope"]).unwrap(), 1);
    }
}
