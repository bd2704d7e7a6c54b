//! Which RESP3 shape each command's reply takes. The engine's
//! [`Reply`](redcodec_engine::Reply) is RESP2 only; this table says how
//! Redis 7.0 answers the same command to a RESP3 client.

use crate::reply::Protocol;

/// How a RESP2 reply is reshaped for RESP3.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// As it is (nulls become `_`).
    Plain,
    /// A flat `[k, v, k, v…]` array becomes a map (HGETALL, CONFIG GET).
    Map,
    /// An array becomes a set (SMEMBERS, SINTER…).
    Set,
    /// A bulk number becomes a double (ZSCORE, ZINCRBY).
    Double,
    /// An array of bulk numbers or nils becomes doubles (ZMSCORE).
    Doubles,
    /// `[m, s, m, s…]` with scores becomes `[[m, s], …]`, scores as
    /// doubles (ZRANGE … WITHSCORES, ZPOPMIN with a count).
    ScoredPairs,
    /// `[m, s]` with the score as a double (ZPOPMIN without a count).
    ScoredFlat,
    /// `[f, v, f, v…]` becomes `[[f, v], …]` (HRANDFIELD … WITHVALUES).
    Pairs,
    /// `[key, m, s]` with the score as a double (BZPOPMIN).
    KeyScored,
    /// `[key, [[m, s], …]]` with scores as doubles (BZMPOP).
    KeyScoredPairs,
    /// A bulk string becomes a verbatim string of format `txt` (INFO,
    /// CLIENT INFO, CLIENT LIST: Redis' `addReplyVerbatim`).
    Verbatim,
}

fn has_word(args: &[Vec<u8>], word: &str) -> bool {
    args.iter()
        .skip(2)
        .any(|a| a.eq_ignore_ascii_case(word.as_bytes()))
}

/// The RESP3 shape of the reply to `args` (name first).
pub fn shape_of(args: &[Vec<u8>], protocol: Protocol) -> Shape {
    if protocol == Protocol::Resp2 || args.is_empty() {
        return Shape::Plain;
    }
    let name = String::from_utf8_lossy(&args[0]).to_ascii_lowercase();
    match name.as_str() {
        "hgetall" | "hello" => Shape::Map,
        "config" if args.get(1).is_some_and(|a| a.eq_ignore_ascii_case(b"get")) => Shape::Map,
        "smembers" | "sinter" | "sunion" | "sdiff" => Shape::Set,
        "zscore" | "zincrby" => Shape::Double,
        "zmscore" => Shape::Doubles,
        "zadd" if has_word(args, "incr") => Shape::Double,
        "zrange" | "zrangebyscore" | "zrevrange" | "zrevrangebyscore" | "zunion" | "zinter"
        | "zdiff"
            if has_word(args, "withscores") =>
        {
            Shape::ScoredPairs
        }
        "zrandmember" if has_word(args, "withscores") => Shape::ScoredPairs,
        "zpopmin" | "zpopmax" if args.len() > 2 => Shape::ScoredPairs,
        "zpopmin" | "zpopmax" => Shape::ScoredFlat,
        "bzpopmin" | "bzpopmax" => Shape::KeyScored,
        "bzmpop" | "zmpop" => Shape::KeyScoredPairs,
        "hrandfield" if has_word(args, "withvalues") => Shape::Pairs,
        "lcs" if has_word(args, "idx") => Shape::Map,
        "info" => Shape::Verbatim,
        // Kvrocks' CLUSTER NODES, INFO and REPLICAS: `conn->VerbatimString`.
        "cluster"
            if args
                .get(1)
                .is_some_and(|a| crate::cluster::cluster_commands::verbatim(a)) =>
        {
            Shape::Verbatim
        }
        "client"
            if args.get(1).is_some_and(|a| {
                a.eq_ignore_ascii_case(b"info") || a.eq_ignore_ascii_case(b"list")
            }) =>
        {
            Shape::Verbatim
        }
        _ => Shape::Plain,
    }
}
