//! Commands that are another command's body with some arguments fixed
//! (ZREVRANGE is ZRANGE walking backward, ZPOPMAX is ZPOPMIN from the
//! other end): [`variants!`] writes their handlers.

/// Writes one command handler per line: `fn name(ctx, a) => body;` becomes
/// a [`Handler`](crate::command::Handler) named `name` that evaluates
/// `body` with the context and the arguments bound to the given names.
/// Visibility and doc comments go before `fn`.
macro_rules! variants {
    ($($(#[$attr:meta])* $vis:vis fn $name:ident($ctx:ident, $a:ident) => $body:expr;)*) => {
        $(
            $(#[$attr])*
            $vis fn $name<C: redcodec_codec::Codec, S: $crate::store::KvStore>(
                $ctx: &mut $crate::keyspace::Ctx<'_, C, S>,
                $a: &[&[u8]],
            ) -> $crate::error::CmdResult<$crate::reply::Reply> {
                $body
            }
        )*
    };
}

pub(crate) use variants;
