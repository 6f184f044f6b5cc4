//! Bolt messages: the framing that carries them (chunks of at most 64 KiB,
//! a message ended by an empty chunk), the requests a client sends and the
//! responses a server writes.

use crate::packstream::{self, DecodeError, Encoder, Pack};
use crate::values::{self, ParamError};
use plexus::{Params, Value};
use std::fmt;
use tokio::io::{AsyncRead, AsyncReadExt};

/// Request tags.
mod tag {
    pub const HELLO: u8 = 0x01;
    pub const GOODBYE: u8 = 0x02;
    pub const RESET: u8 = 0x0F;
    pub const RUN: u8 = 0x10;
    pub const BEGIN: u8 = 0x11;
    pub const COMMIT: u8 = 0x12;
    pub const ROLLBACK: u8 = 0x13;
    pub const DISCARD: u8 = 0x2F;
    pub const PULL: u8 = 0x3F;
    pub const TELEMETRY: u8 = 0x54;
    pub const ROUTE: u8 = 0x66;
    pub const LOGON: u8 = 0x6A;
    pub const LOGOFF: u8 = 0x6B;
    pub const SUCCESS: u8 = 0x70;
    pub const RECORD: u8 = 0x71;
    pub const IGNORED: u8 = 0x7E;
    pub const FAILURE: u8 = 0x7F;
}

/// What a client asks.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    /// Bolt 5.0 carries the credentials in `extra`; later versions in LOGON.
    Hello {
        extra: Pack,
    },
    Logon {
        auth: Pack,
    },
    Logoff,
    Goodbye,
    Reset,
    Run {
        query: String,
        params: Params,
        extra: Pack,
    },
    Begin {
        extra: Pack,
    },
    Commit,
    Rollback,
    /// `n` rows (-1: all) of result `qid` (-1: the last one opened).
    Pull {
        n: i64,
        qid: i64,
    },
    Discard {
        n: i64,
        qid: i64,
    },
    Route {
        extra: Pack,
    },
    Telemetry,
}

impl Request {
    pub fn name(&self) -> &'static str {
        match self {
            Request::Hello { .. } => "HELLO",
            Request::Logon { .. } => "LOGON",
            Request::Logoff => "LOGOFF",
            Request::Goodbye => "GOODBYE",
            Request::Reset => "RESET",
            Request::Run { .. } => "RUN",
            Request::Begin { .. } => "BEGIN",
            Request::Commit => "COMMIT",
            Request::Rollback => "ROLLBACK",
            Request::Pull { .. } => "PULL",
            Request::Discard { .. } => "DISCARD",
            Request::Route { .. } => "ROUTE",
            Request::Telemetry => "TELEMETRY",
        }
    }
}

/// Why a message could not be taken.
#[derive(Debug, Clone, PartialEq)]
pub enum MessageError {
    /// Not PackStream.
    Decode(DecodeError),
    /// A value that is not a structure, an unknown tag, wrong fields: the
    /// client does not speak Bolt as negotiated; the connection ends.
    Protocol(String),
    /// A parameter Plexus cannot take: the request fails, the connection stays.
    Param(ParamError),
}

impl fmt::Display for MessageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MessageError::Decode(e) => write!(f, "malformed message: {e}"),
            MessageError::Protocol(m) => f.write_str(m),
            MessageError::Param(e) => write!(f, "invalid parameter: {e}"),
        }
    }
}

fn protocol<T>(msg: impl Into<String>) -> Result<T, MessageError> {
    Err(MessageError::Protocol(msg.into()))
}

/// Parses one message's bytes.
pub fn parse(bytes: &[u8]) -> Result<Request, MessageError> {
    let Pack::Struct(t, fields) = packstream::decode(bytes).map_err(MessageError::Decode)? else {
        return protocol("a message that is not a structure");
    };
    let mut f = fields.into_iter();
    let mut next = |what: &str| {
        f.next()
            .ok_or_else(|| MessageError::Protocol(format!("a message without its {what}")))
    };
    let map = |p: Pack, what: &str| match p {
        m @ Pack::Map(_) => Ok(m),
        Pack::Null => Ok(Pack::Map(vec![])),
        _ => protocol(format!("the {what} of a message is not a map")),
    };
    Ok(match t {
        tag::HELLO => Request::Hello {
            extra: map(next("extra")?, "extra")?,
        },
        tag::LOGON => Request::Logon {
            auth: map(next("auth")?, "auth")?,
        },
        tag::LOGOFF => Request::Logoff,
        tag::GOODBYE => Request::Goodbye,
        tag::RESET => Request::Reset,
        tag::RUN => {
            let Pack::String(query) = next("query")? else {
                return protocol("RUN without a query string");
            };
            let params = match map(next("parameters")?, "parameters")? {
                Pack::Map(entries) => values::decode_map(entries).map_err(MessageError::Param)?,
                _ => Params::new(),
            };
            // Bolt 5 always sends extra; be lenient with clients that don't.
            let extra = map(next("extra").unwrap_or(Pack::Null), "extra")?;
            Request::Run {
                query,
                params,
                extra,
            }
        }
        tag::BEGIN => Request::Begin {
            extra: map(next("extra").unwrap_or(Pack::Null), "extra")?,
        },
        tag::COMMIT => Request::Commit,
        tag::ROLLBACK => Request::Rollback,
        tag::PULL | tag::DISCARD => {
            let extra = map(next("extra").unwrap_or(Pack::Null), "extra")?;
            let n = extra.get("n").and_then(Pack::as_int).unwrap_or(-1);
            let qid = extra.get("qid").and_then(Pack::as_int).unwrap_or(-1);
            if t == tag::PULL {
                Request::Pull { n, qid }
            } else {
                Request::Discard { n, qid }
            }
        }
        tag::ROUTE => {
            let _routing = next("routing context")?;
            let _bookmarks = next("bookmarks");
            Request::Route {
                extra: map(next("extra").unwrap_or(Pack::Null), "extra")?,
            }
        }
        tag::TELEMETRY => Request::Telemetry,
        other => return protocol(format!("unknown message 0x{other:02X}")),
    })
}

/// Why reading a message failed.
#[derive(Debug)]
pub enum ReadError {
    /// The peer closed the connection between messages.
    Closed,
    Io(std::io::Error),
    /// A message larger than the server accepts.
    TooLarge {
        limit: usize,
    },
}

/// Reads one message: its chunks joined. Empty chunks before it are
/// keep-alive NOOPs and skipped. A message may not grow beyond `limit`.
pub async fn read<R: AsyncRead + Unpin>(r: &mut R, limit: usize) -> Result<Vec<u8>, ReadError> {
    let mut msg = Vec::new();
    let mut first = true;
    loop {
        let mut len = [0u8; 2];
        match r.read_exact(&mut len).await {
            Ok(_) => {}
            Err(e) if first && e.kind() == std::io::ErrorKind::UnexpectedEof => {
                return Err(ReadError::Closed)
            }
            Err(e) => return Err(ReadError::Io(e)),
        }
        first = false;
        let n = usize::from(u16::from_be_bytes(len));
        if n == 0 {
            if msg.is_empty() {
                continue; // NOOP
            }
            return Ok(msg);
        }
        if msg.len() + n > limit {
            return Err(ReadError::TooLarge { limit });
        }
        let at = msg.len();
        msg.resize(at + n, 0);
        r.read_exact(&mut msg[at..]).await.map_err(ReadError::Io)?;
    }
}

/// Appends `body` to `out` as one message: chunks of at most 65,535 bytes,
/// then the empty chunk that ends it.
pub fn frame(out: &mut Vec<u8>, body: &[u8]) {
    for chunk in body.chunks(usize::from(u16::MAX)) {
        out.extend_from_slice(&(chunk.len() as u16).to_be_bytes());
        out.extend_from_slice(chunk);
    }
    out.extend_from_slice(&[0, 0]);
}

/// A SUCCESS with `meta`, framed onto `out`.
pub fn success(out: &mut Vec<u8>, meta: &Pack) {
    let mut e = Encoder::default();
    e.struct_header(1, tag::SUCCESS);
    e.pack(meta);
    frame(out, &e.out);
}

pub fn failure(out: &mut Vec<u8>, meta: &Pack) {
    let mut e = Encoder::default();
    e.struct_header(1, tag::FAILURE);
    e.pack(meta);
    frame(out, &e.out);
}

pub fn ignored(out: &mut Vec<u8>) {
    frame(out, &[0xB0, tag::IGNORED]);
}

/// A RECORD of one row, framed onto `out`; `scratch` is reused between rows.
pub fn record(out: &mut Vec<u8>, scratch: &mut Encoder, row: &[Value]) {
    scratch.out.clear();
    scratch.struct_header(1, tag::RECORD);
    scratch.list_header(row.len());
    row.iter().for_each(|v| values::encode(scratch, v));
    frame(out, &scratch.out);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(tag: u8, fields: Vec<Pack>) -> Vec<u8> {
        packstream::encode(&Pack::Struct(tag, fields))
    }

    #[test]
    fn requests_parse() {
        let run = message(
            tag::RUN,
            vec![
                Pack::string("RETURN $x"),
                Pack::map([("x", Pack::Int(1))]),
                Pack::map([("db", Pack::string("g"))]),
            ],
        );
        let Request::Run {
            query,
            params,
            extra,
        } = parse(&run).unwrap()
        else {
            panic!("not a RUN")
        };
        assert_eq!(query, "RETURN $x");
        assert_eq!(params.get("x"), Some(&Value::Int(1)));
        assert_eq!(extra.get("db").and_then(Pack::as_str), Some("g"));
        let pull = message(tag::PULL, vec![Pack::map([("n", Pack::Int(2))])]);
        assert_eq!(parse(&pull).unwrap(), Request::Pull { n: 2, qid: -1 });
        assert_eq!(parse(&message(tag::RESET, vec![])).unwrap(), Request::Reset);
    }

    #[test]
    fn wrong_messages_are_named() {
        let unknown = parse(&message(0x55, vec![])).unwrap_err().to_string();
        assert!(unknown.contains("unknown message 0x55"), "{unknown}");
        let no_query = parse(&message(tag::RUN, vec![Pack::Int(1)])).unwrap_err();
        assert!(no_query.to_string().contains("without a query"));
        let not_struct = parse(&[0x01]).unwrap_err();
        assert!(not_struct.to_string().contains("not a structure"));
        let bad_param = message(
            tag::RUN,
            vec![
                Pack::string("RETURN $d"),
                Pack::map([("d", Pack::Struct(b'D', vec![Pack::string("x")]))]),
                Pack::Map(vec![]),
            ],
        );
        assert!(matches!(parse(&bad_param), Err(MessageError::Param(_))));
    }

    #[test]
    fn framing_splits_and_joins() {
        let body = vec![7u8; 70_000];
        let mut out = Vec::new();
        frame(&mut out, &body);
        // Two chunks and the end marker, preceded here by a NOOP.
        let mut wire = vec![0, 0];
        wire.extend_from_slice(&out);
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let got = rt.block_on(read(&mut wire.as_slice(), 1 << 20)).unwrap();
        assert_eq!(got, body);
        let too_big = rt.block_on(read(&mut out.as_slice(), 1000));
        assert!(matches!(too_big, Err(ReadError::TooLarge { limit: 1000 })));
        let closed = rt.block_on(read(&mut [].as_slice(), 1000));
        assert!(matches!(closed, Err(ReadError::Closed)));
    }
}
