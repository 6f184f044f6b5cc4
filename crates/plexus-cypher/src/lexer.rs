//! Tokens of openCypher, by `logos`. Keywords are not tokens of their own:
//! Cypher keywords are case-insensitive and most may also be names, so the
//! parser recognises them among identifiers.

use crate::error::{ParseError, Span};
use logos::Logos;

#[derive(Logos, Debug, Clone, PartialEq)]
#[logos(skip r"[ \t\r\n\f\u{a0}\u{feff}]+")]
#[logos(skip(r"//[^\n]*", allow_greedy = true))]
#[logos(skip r"/\*([^*]|\*+[^*/])*\*+/")]
pub enum Tok {
    #[regex(r"[\p{L}_][\p{L}\p{N}_]*", |l| l.slice().to_string())]
    Ident(String),
    #[regex(r"`([^`]|``)*`", |l| { let s = l.slice(); s[1..s.len() - 1].replace("``", "`") })]
    Quoted(String),
    #[regex(r"\$([\p{L}_][\p{L}\p{N}_]*|[0-9]+)", |l| l.slice()[1..].to_string())]
    Param(String),
    #[regex(r"[0-9]+", |l| l.slice().to_string())]
    Int(String),
    #[regex(r"0x[0-9a-fA-F]+", |l| l.slice().to_string())]
    HexInt(String),
    #[regex(r"0o[0-7]+", |l| l.slice().to_string())]
    OctInt(String),
    #[regex(r"([0-9]+\.[0-9]+|\.[0-9]+)([eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+", |l| l.slice().to_string())]
    Float(String),
    #[regex(r#"'([^'\\]|\\.)*'|"([^"\\]|\\.)*""#, |l| l.slice().to_string())]
    Str(String),
    /// `$(`, which opens a dynamic label: `SET n:$(expr)`.
    #[token("$(")]
    DollarParen,
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token(",")]
    Comma,
    #[token(".")]
    Dot,
    #[token("..")]
    DotDot,
    #[token(":")]
    Colon,
    #[token(";")]
    Semi,
    #[token("|")]
    Pipe,
    #[token("&")]
    Amp,
    #[token("!")]
    Bang,
    #[token("%")]
    Percent,
    #[token("+")]
    Plus,
    #[token("+=")]
    PlusEq,
    #[token("-")]
    Minus,
    #[token("*")]
    Star,
    #[token("/")]
    Slash,
    #[token("^")]
    Caret,
    #[token("=")]
    Eq,
    #[token("<>")]
    Neq,
    #[token("!=")]
    BangEq,
    #[token("<")]
    Lt,
    #[token(">")]
    Gt,
    #[token("<=")]
    Le,
    #[token(">=")]
    Ge,
    #[token("=~")]
    RegexMatch,
}

/// A token with its byte span.
#[derive(Debug, Clone, PartialEq)]
pub struct Spanned {
    pub tok: Tok,
    pub span: Span,
}

/// Dashes that look like the minus sign but are not it.
const DASHES: [char; 8] = [
    '\u{2010}', '\u{2011}', '\u{2012}', '\u{2013}', '\u{2014}', '\u{2015}', '\u{2212}', '\u{fe63}',
];

/// Splits `src` into tokens, or reports the first character that starts none.
pub fn lex(src: &str) -> Result<Vec<Spanned>, ParseError> {
    let mut out = Vec::new();
    let mut lexer = Tok::lexer(src);
    while let Some(t) = lexer.next() {
        let r = lexer.span();
        let span = Span {
            start: r.start,
            end: r.end,
        };
        match t {
            Ok(tok) => out.push(Spanned { tok, span }),
            Err(()) => {
                let bad = &src[r.start..];
                if bad.starts_with(DASHES) {
                    return Err(ParseError::new(
                        src,
                        span,
                        "InvalidUnicodeCharacter",
                        "a dash that is not the minus sign",
                        "write '-' (U+002D) for a minus or an arrow",
                    ));
                }
                let (what, hint) = if bad.starts_with('\'') || bad.starts_with('"') {
                    (
                        "unterminated string",
                        "close the string with the same quote it opens with",
                    )
                } else if bad.starts_with('`') {
                    ("unterminated quoted name", "close the name with a backtick")
                } else if bad.starts_with("/*") {
                    ("unterminated comment", "close the comment with */")
                } else {
                    (
                        "unexpected character",
                        "remove it, or quote it inside a string",
                    )
                };
                return Err(ParseError::new(src, span, "UnexpectedSyntax", what, hint));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<Tok> {
        lex(s).unwrap().into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn numbers_ranges_and_strings() {
        assert_eq!(
            toks("1..3"),
            vec![Tok::Int("1".into()), Tok::DotDot, Tok::Int("3".into())]
        );
        assert_eq!(toks(".5e3"), vec![Tok::Float(".5e3".into())]);
        assert_eq!(
            toks("0x1F 0o17"),
            vec![Tok::HexInt("0x1F".into()), Tok::OctInt("0o17".into())]
        );
        assert_eq!(toks(r"'it\'s'"), vec![Tok::Str(r"'it\'s'".into())]);
        assert_eq!(
            toks("`a``b` $p $0"),
            vec![
                Tok::Quoted("a`b".into()),
                Tok::Param("p".into()),
                Tok::Param("0".into())
            ]
        );
        assert_eq!(
            toks("a<>b <= =~ -> <-- // c\n x"),
            vec![
                Tok::Ident("a".into()),
                Tok::Neq,
                Tok::Ident("b".into()),
                Tok::Le,
                Tok::RegexMatch,
                Tok::Minus,
                Tok::Gt,
                Tok::Lt,
                Tok::Minus,
                Tok::Minus,
                Tok::Ident("x".into()),
            ]
        );
    }

    #[test]
    fn bad_characters_are_located() {
        let e = lex("MATCH (n) RETURN 'open").unwrap_err();
        assert_eq!((e.line, e.column), (1, 18));
        assert!(e.message.contains("unterminated string"));
        assert!(lex("RETURN 1 # 2")
            .unwrap_err()
            .message
            .contains("unexpected character"));
    }
}
