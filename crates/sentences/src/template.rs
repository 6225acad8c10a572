//! The template language, parsed the way hassil 3.x parses it (`parser.py`,
//! `parse_expression.py`): words keep their trailing spaces, `(a|b)` alternatives, `[a]`
//! optionals (an alternative with an empty branch), `(a;b)` permutations (each item padded with
//! a space), `{list}` / `{list:slot}` / `{@capture}` / `{1..10:slot}`, `<rule>`, and `\` escaping
//! the next character. Nesting is bounded by [`crate::limits::MAX_NESTING`].

use crate::limits::MAX_NESTING;
use crate::text::normalize_text;

/// A parsed template expression.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Expr {
    /// Literal text, whitespace normalised (not lower-cased); `""` is the empty branch of an
    /// optional.
    Text(String),
    /// All items in order.
    Seq(Vec<Expr>),
    /// One of the items, in order.
    Alt(Vec<Expr>),
    /// All items, in any order.
    Perm(Vec<Expr>),
    /// A list reference.
    List(ListRef),
    /// An expansion rule reference.
    Rule(String),
}

/// `{list}`, `{list:slot}`, `{@name}`, `{1..10:slot}`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ListRef {
    pub(crate) list: String,
    pub(crate) slot: String,
    /// `@`: captured for a response only, not a slot.
    pub(crate) capture: bool,
    /// Whether whitespace follows the reference in the template.
    pub(crate) end_of_word: bool,
    /// `{N..M:slot}` or `{N..M,S:slot}`: a range used when no list has that name.
    pub(crate) inline_range: Option<(i64, i64, i64)>,
}

/// Why a template does not parse, and at which character.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ParseError {
    /// A message and the 0-based character offset.
    Syntax(String, usize),
    /// Deeper than [`MAX_NESTING`].
    TooDeep,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Word,
    Group,
    Opt,
    List,
    Rule,
    Alt,
    Perm,
}

const DELIM_CHARS: [char; 8] = ['(', ')', '[', ']', '{', '}', '<', '>'];

fn peek(text: &[char], at: usize) -> Option<Kind> {
    Some(match *text.get(at)? {
        '(' => Kind::Group,
        '[' => Kind::Opt,
        '{' => Kind::List,
        '<' => Kind::Rule,
        '|' => Kind::Alt,
        ';' => Kind::Perm,
        _ => Kind::Word,
    })
}

fn find_end_delimiter(text: &[char], from: usize, open: char, close: char) -> Option<usize> {
    let mut stack = 1usize;
    let mut escaped = false;
    for (i, &c) in text.iter().enumerate().skip(from) {
        if escaped {
            escaped = false;
            continue;
        }
        if c == '\\' {
            escaped = true;
            continue;
        }
        if c == close {
            stack -= 1;
            if stack == 0 {
                return Some(i + 1);
            }
        }
        if c == open {
            stack += 1;
        }
    }
    None
}

fn find_end_word(text: &[char], from: usize) -> usize {
    let mut escaped = false;
    let mut separator = false;
    for (i, &c) in text.iter().enumerate().skip(from) {
        if escaped {
            escaped = false;
            continue;
        }
        if c == '\\' {
            escaped = true;
            continue;
        }
        if i > from && c == ' ' {
            separator = true;
            continue;
        }
        if separator && c != ' ' {
            return i;
        }
        if c == '|' || c == ';' || DELIM_CHARS.contains(&c) {
            return i;
        }
    }
    text.len()
}

/// The next chunk from `at`: its kind and end (exclusive).
fn next_chunk(text: &[char], at: usize, base: usize) -> Result<Option<(Kind, usize)>, ParseError> {
    let Some(kind) = peek(text, at) else {
        return Ok(None);
    };
    let end = match kind {
        Kind::Word => find_end_word(text, at),
        Kind::Group | Kind::Opt | Kind::List | Kind::Rule => {
            let (open, close, what) = match kind {
                Kind::Group => ('(', ')', "')'"),
                Kind::Opt => ('[', ']', "']'"),
                Kind::List => ('{', '}', "'}'"),
                _ => ('<', '>', "'>'"),
            };
            find_end_delimiter(text, at + 1, open, close).ok_or_else(|| {
                ParseError::Syntax(format!("no closing {what}"), (base + at).saturating_sub(1))
            })?
        }
        Kind::Alt | Kind::Perm => at + 1,
    };
    Ok(Some((kind, end)))
}

pub(crate) fn remove_escapes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some(n) => out.push(n),
                None => out.push(c),
            }
        } else {
            out.push(c);
        }
    }
    out
}

enum Group {
    Seq(Vec<Expr>),
    Alt(Vec<Expr>),
    Perm(Vec<Expr>),
}

impl Group {
    fn into_expr(self) -> Expr {
        match self {
            Group::Seq(v) => Expr::Seq(v),
            Group::Alt(v) => Expr::Alt(v),
            Group::Perm(v) => Expr::Perm(v),
        }
    }
}

/// Parses the inside of a group: `text` without its delimiters; `base` is its offset in the
/// template for messages.
fn parse_group(text: &[char], base: usize, depth: usize) -> Result<Group, ParseError> {
    if depth > MAX_NESTING {
        return Err(ParseError::TooDeep);
    }
    let mut grp = Group::Seq(Vec::new());
    let mut at = 0usize;
    while let Some((kind, end)) = next_chunk(text, at, base)? {
        if end == at {
            let c = text.get(at).copied().unwrap_or(' ');
            return Err(ParseError::Syntax(format!("unexpected '{c}'"), base + at));
        }
        match kind {
            Kind::Alt => {
                grp = match grp {
                    Group::Alt(v) => Group::Alt(v),
                    other => Group::Alt(vec![other.into_expr()]),
                };
                if let Group::Alt(v) = &mut grp {
                    v.push(Expr::Seq(Vec::new()));
                }
            }
            Kind::Perm => {
                grp = match grp {
                    Group::Perm(v) => Group::Perm(v),
                    other => Group::Perm(vec![other.into_expr()]),
                };
                if let Group::Perm(v) = &mut grp {
                    v.push(Expr::Seq(Vec::new()));
                }
            }
            _ => {
                let end_of_word = text.get(end).is_some_and(|c| c.is_whitespace());
                let item = parse_chunk(&text[at..end], kind, base + at, depth, end_of_word)?;
                match &mut grp {
                    Group::Seq(v) => v.push(item),
                    Group::Alt(v) | Group::Perm(v) => match v.last_mut() {
                        Some(Expr::Seq(s)) => s.push(item),
                        _ => {
                            return Err(ParseError::Syntax(
                                "mixed '|' and ';' in one group".to_owned(),
                                base + at,
                            ))
                        }
                    },
                }
            }
        }
        at = end;
    }
    if let Group::Perm(items) = &mut grp {
        for item in items.iter_mut() {
            match item {
                Expr::Seq(s) => {
                    s.insert(0, Expr::Text(" ".to_owned()));
                    s.push(Expr::Text(" ".to_owned()));
                }
                _ => {
                    return Err(ParseError::Syntax(
                        "mixed '|' and ';' in one group".to_owned(),
                        base,
                    ))
                }
            }
        }
    }
    Ok(grp)
}

fn parse_chunk(
    chunk: &[char],
    kind: Kind,
    base: usize,
    depth: usize,
    end_of_word: bool,
) -> Result<Expr, ParseError> {
    let inner = || -> &[char] {
        if chunk.len() >= 2 {
            &chunk[1..chunk.len() - 1]
        } else {
            &[]
        }
    };
    match kind {
        Kind::Word => {
            let s: String = chunk.iter().collect();
            Ok(Expr::Text(normalize_text(&remove_escapes(&s))))
        }
        Kind::Group => Ok(parse_group(inner(), base + 1, depth + 1)?.into_expr()),
        Kind::Opt => {
            let mut items = match parse_group(inner(), base + 1, depth + 1)? {
                Group::Alt(v) => v,
                other => vec![other.into_expr()],
            };
            items.push(Expr::Text(String::new()));
            Ok(Expr::Alt(items))
        }
        Kind::List => {
            let s: String = inner().iter().collect();
            let name = remove_escapes(&s);
            if name.is_empty() {
                return Err(ParseError::Syntax("empty list name {}".to_owned(), base));
            }
            Ok(Expr::List(list_ref(&name, end_of_word)))
        }
        Kind::Rule => {
            let s: String = inner().iter().collect();
            let name = remove_escapes(&s);
            if name.is_empty() {
                return Err(ParseError::Syntax("empty rule name <>".to_owned(), base));
            }
            Ok(Expr::Rule(name))
        }
        Kind::Alt | Kind::Perm => Err(ParseError::Syntax("unexpected separator".to_owned(), base)),
    }
}

fn list_ref(name: &str, end_of_word: bool) -> ListRef {
    if let Some((list, slot)) = name.split_once(':') {
        let (slot, capture) = match slot.strip_prefix('@') {
            Some(s) => (s.to_owned(), true),
            None => (slot.to_owned(), false),
        };
        ListRef {
            list: list.to_owned(),
            slot,
            capture,
            end_of_word,
            inline_range: inline_range(list),
        }
    } else if let Some(n) = name.strip_prefix('@') {
        ListRef {
            list: n.to_owned(),
            slot: n.to_owned(),
            capture: true,
            end_of_word,
            inline_range: None,
        }
    } else {
        ListRef {
            list: name.to_owned(),
            slot: name.to_owned(),
            capture: false,
            end_of_word,
            inline_range: None,
        }
    }
}

/// hassil's `^(\d+)..(\d+)(?:,(\d+))?$` (the dots match any two characters).
fn inline_range(name: &str) -> Option<(i64, i64, i64)> {
    let chars: Vec<char> = name.chars().collect();
    let digits = |from: usize| -> usize {
        chars[from..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count()
    };
    let a = digits(0);
    if a == 0 || a > 12 || chars.len() < a + 3 {
        return None;
    }
    let b_from = a + 2;
    let b = digits(b_from);
    if b == 0 || b > 12 {
        return None;
    }
    let num = |from: usize, len: usize| -> Option<i64> {
        chars[from..from + len]
            .iter()
            .collect::<String>()
            .parse()
            .ok()
    };
    let start = num(0, a)?;
    let stop = num(b_from, b)?;
    let rest = b_from + b;
    if rest == chars.len() {
        return Some((start, stop, 1));
    }
    if chars.get(rest) != Some(&',') {
        return None;
    }
    let c = digits(rest + 1);
    if c == 0 || c > 12 || rest + 1 + c != chars.len() {
        return None;
    }
    Some((start, stop, num(rest + 1, c)?))
}

/// Parses one sentence template as hassil's `parse_sentence` does: stripped, wrapped in a group,
/// a group of one group unpacked.
pub(crate) fn parse_sentence(text: &str) -> Result<Expr, ParseError> {
    let mut chars: Vec<char> = Vec::with_capacity(text.len() + 2);
    chars.push('(');
    chars.extend(text.trim().chars());
    chars.push(')');
    let end = find_end_delimiter(&chars, 1, '(', ')').ok_or_else(|| {
        ParseError::Syntax("no closing ')'".to_owned(), chars.len().saturating_sub(2))
    })?;
    if end != chars.len() {
        return Err(ParseError::Syntax(
            "unexpected ')'".to_owned(),
            end.saturating_sub(2),
        ));
    }
    let grp = parse_group(&chars[1..chars.len() - 1], 0, 1)?;
    let expr = grp.into_expr();
    Ok(match expr {
        Expr::Seq(mut v) | Expr::Alt(mut v) | Expr::Perm(mut v)
            if v.len() == 1 && matches!(v[0], Expr::Seq(_) | Expr::Alt(_) | Expr::Perm(_)) =>
        {
            v.remove(0)
        }
        other => other,
    })
}

/// hassil's `is_template`: whether text has template syntax.
pub(crate) fn is_template(text: &str) -> bool {
    text.chars()
        .any(|c| matches!(c, '(' | ')' | '{' | '}' | '<' | '>' | '[' | ']' | '|' | '@'))
}

/// The number of literal text items (hassil's `text_chunk_count`), rules and lists not followed.
pub(crate) fn text_chunk_count(e: &Expr) -> usize {
    match e {
        Expr::Text(_) => 1,
        Expr::Seq(v) | Expr::Alt(v) | Expr::Perm(v) => v.iter().map(text_chunk_count).sum(),
        Expr::List(_) | Expr::Rule(_) => 0,
    }
}

/// The list names a template names directly (rules not followed).
pub(crate) fn list_names<'a>(e: &'a Expr, out: &mut Vec<&'a str>) {
    match e {
        Expr::List(l) => out.push(&l.list),
        Expr::Seq(v) | Expr::Alt(v) | Expr::Perm(v) => v.iter().for_each(|i| list_names(i, out)),
        Expr::Text(_) | Expr::Rule(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Expr {
        Expr::Text(s.to_owned())
    }

    #[test]
    fn words_keep_their_spaces_and_optionals_get_an_empty_branch() {
        let e = parse_sentence("turn on [the] light").unwrap();
        assert_eq!(
            e,
            Expr::Seq(vec![
                t("turn "),
                t("on "),
                Expr::Alt(vec![Expr::Seq(vec![t("the")]), t("")]),
                t(" light"),
            ])
        );
    }

    #[test]
    fn permutations_pad_items_and_escapes_are_literal() {
        let e = parse_sentence(r"(a;b) \(x\)").unwrap();
        let Expr::Seq(items) = e else { panic!() };
        assert_eq!(
            items[0],
            Expr::Perm(vec![
                Expr::Seq(vec![t(" "), t("a"), t(" ")]),
                Expr::Seq(vec![t(" "), t("b"), t(" ")]),
            ])
        );
        assert_eq!(items[1], t(" (x)"));
    }

    #[test]
    fn lists_slots_captures_and_inline_ranges() {
        let one = |s: &str| match parse_sentence(s).unwrap() {
            Expr::Seq(mut v) if v.len() == 1 => v.remove(0),
            other => other,
        };
        let Expr::List(l) = one("{area:room}") else {
            panic!()
        };
        assert_eq!(
            (l.list.as_str(), l.slot.as_str(), l.capture),
            ("area", "room", false)
        );
        let Expr::List(l) = one("{1..10,2:n}") else {
            panic!()
        };
        assert_eq!(l.inline_range, Some((1, 10, 2)));
        let Expr::List(l) = one("{@x}") else { panic!() };
        assert!(l.capture);
    }

    #[test]
    fn broken_templates_say_where() {
        assert_eq!(
            parse_sentence("turn (on"),
            Err(ParseError::Syntax("no closing ')'".to_owned(), 8))
        );
        assert!(matches!(
            parse_sentence("a ) b"),
            Err(ParseError::Syntax(_, _))
        ));
        let deep = format!("{}x{}", "(".repeat(40), ")".repeat(40));
        assert_eq!(parse_sentence(&deep), Err(ParseError::TooDeep));
    }
}
