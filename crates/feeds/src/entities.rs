//! Character references: the XML five, the HTML 4 named entities (Latin-1, symbols, Greek and
//! typographic ones) plus a few common HTML5 additions, and numeric references.

use std::borrow::Cow;

/// Looks up a named entity (without `&` and `;`). Returns the replacement text.
pub(crate) fn named(name: &str) -> Option<&'static str> {
    Some(match name {
        // XML
        "amp" => "&",
        "lt" => "<",
        "gt" => ">",
        "quot" => "\"",
        "apos" => "'",
        // Latin-1
        "nbsp" => "\u{a0}",
        "iexcl" => "¡",
        "cent" => "¢",
        "pound" => "£",
        "curren" => "¤",
        "yen" => "¥",
        "brvbar" => "¦",
        "sect" => "§",
        "uml" => "¨",
        "copy" => "©",
        "ordf" => "ª",
        "laquo" => "«",
        "not" => "¬",
        "shy" => "\u{ad}",
        "reg" => "®",
        "macr" => "¯",
        "deg" => "°",
        "plusmn" => "±",
        "sup2" => "²",
        "sup3" => "³",
        "acute" => "´",
        "micro" => "µ",
        "para" => "¶",
        "middot" => "·",
        "cedil" => "¸",
        "sup1" => "¹",
        "ordm" => "º",
        "raquo" => "»",
        "frac14" => "¼",
        "frac12" => "½",
        "frac34" => "¾",
        "iquest" => "¿",
        "Agrave" => "À",
        "Aacute" => "Á",
        "Acirc" => "Â",
        "Atilde" => "Ã",
        "Auml" => "Ä",
        "Aring" => "Å",
        "AElig" => "Æ",
        "Ccedil" => "Ç",
        "Egrave" => "È",
        "Eacute" => "É",
        "Ecirc" => "Ê",
        "Euml" => "Ë",
        "Igrave" => "Ì",
        "Iacute" => "Í",
        "Icirc" => "Î",
        "Iuml" => "Ï",
        "ETH" => "Ð",
        "Ntilde" => "Ñ",
        "Ograve" => "Ò",
        "Oacute" => "Ó",
        "Ocirc" => "Ô",
        "Otilde" => "Õ",
        "Ouml" => "Ö",
        "times" => "×",
        "Oslash" => "Ø",
        "Ugrave" => "Ù",
        "Uacute" => "Ú",
        "Ucirc" => "Û",
        "Uuml" => "Ü",
        "Yacute" => "Ý",
        "THORN" => "Þ",
        "szlig" => "ß",
        "agrave" => "à",
        "aacute" => "á",
        "acirc" => "â",
        "atilde" => "ã",
        "auml" => "ä",
        "aring" => "å",
        "aelig" => "æ",
        "ccedil" => "ç",
        "egrave" => "è",
        "eacute" => "é",
        "ecirc" => "ê",
        "euml" => "ë",
        "igrave" => "ì",
        "iacute" => "í",
        "icirc" => "î",
        "iuml" => "ï",
        "eth" => "ð",
        "ntilde" => "ñ",
        "ograve" => "ò",
        "oacute" => "ó",
        "ocirc" => "ô",
        "otilde" => "õ",
        "ouml" => "ö",
        "divide" => "÷",
        "oslash" => "ø",
        "ugrave" => "ù",
        "uacute" => "ú",
        "ucirc" => "û",
        "uuml" => "ü",
        "yacute" => "ý",
        "thorn" => "þ",
        "yuml" => "ÿ",
        // Special
        "OElig" => "Œ",
        "oelig" => "œ",
        "Scaron" => "Š",
        "scaron" => "š",
        "Yuml" => "Ÿ",
        "circ" => "ˆ",
        "tilde" => "˜",
        "ensp" => "\u{2002}",
        "emsp" => "\u{2003}",
        "thinsp" => "\u{2009}",
        "zwnj" => "\u{200c}",
        "zwj" => "\u{200d}",
        "lrm" => "\u{200e}",
        "rlm" => "\u{200f}",
        "ndash" => "–",
        "mdash" => "—",
        "lsquo" => "‘",
        "rsquo" => "’",
        "sbquo" => "‚",
        "ldquo" => "“",
        "rdquo" => "”",
        "bdquo" => "„",
        "dagger" => "†",
        "Dagger" => "‡",
        "permil" => "‰",
        "lsaquo" => "‹",
        "rsaquo" => "›",
        "euro" => "€",
        // Symbols
        "fnof" => "ƒ",
        "bull" => "•",
        "hellip" => "…",
        "prime" => "′",
        "Prime" => "″",
        "oline" => "‾",
        "frasl" => "⁄",
        "weierp" => "℘",
        "image" => "ℑ",
        "real" => "ℜ",
        "trade" => "™",
        "alefsym" => "ℵ",
        "larr" => "←",
        "uarr" => "↑",
        "rarr" => "→",
        "darr" => "↓",
        "harr" => "↔",
        "crarr" => "↵",
        "lArr" => "⇐",
        "uArr" => "⇑",
        "rArr" => "⇒",
        "dArr" => "⇓",
        "hArr" => "⇔",
        "forall" => "∀",
        "part" => "∂",
        "exist" => "∃",
        "empty" => "∅",
        "nabla" => "∇",
        "isin" => "∈",
        "notin" => "∉",
        "ni" => "∋",
        "prod" => "∏",
        "sum" => "∑",
        "minus" => "−",
        "lowast" => "∗",
        "radic" => "√",
        "prop" => "∝",
        "infin" => "∞",
        "ang" => "∠",
        "and" => "∧",
        "or" => "∨",
        "cap" => "∩",
        "cup" => "∪",
        "int" => "∫",
        "there4" => "∴",
        "sim" => "∼",
        "cong" => "≅",
        "asymp" => "≈",
        "ne" => "≠",
        "equiv" => "≡",
        "le" => "≤",
        "ge" => "≥",
        "sub" => "⊂",
        "sup" => "⊃",
        "nsub" => "⊄",
        "sube" => "⊆",
        "supe" => "⊇",
        "oplus" => "⊕",
        "otimes" => "⊗",
        "perp" => "⊥",
        "sdot" => "⋅",
        "lceil" => "⌈",
        "rceil" => "⌉",
        "lfloor" => "⌊",
        "rfloor" => "⌋",
        "lang" => "⟨",
        "rang" => "⟩",
        "loz" => "◊",
        "spades" => "♠",
        "clubs" => "♣",
        "hearts" => "♥",
        "diams" => "♦",
        // Greek
        "Alpha" => "Α",
        "Beta" => "Β",
        "Gamma" => "Γ",
        "Delta" => "Δ",
        "Epsilon" => "Ε",
        "Zeta" => "Ζ",
        "Eta" => "Η",
        "Theta" => "Θ",
        "Iota" => "Ι",
        "Kappa" => "Κ",
        "Lambda" => "Λ",
        "Mu" => "Μ",
        "Nu" => "Ν",
        "Xi" => "Ξ",
        "Omicron" => "Ο",
        "Pi" => "Π",
        "Rho" => "Ρ",
        "Sigma" => "Σ",
        "Tau" => "Τ",
        "Upsilon" => "Υ",
        "Phi" => "Φ",
        "Chi" => "Χ",
        "Psi" => "Ψ",
        "Omega" => "Ω",
        "alpha" => "α",
        "beta" => "β",
        "gamma" => "γ",
        "delta" => "δ",
        "epsilon" => "ε",
        "zeta" => "ζ",
        "eta" => "η",
        "theta" => "θ",
        "iota" => "ι",
        "kappa" => "κ",
        "lambda" => "λ",
        "mu" => "μ",
        "nu" => "ν",
        "xi" => "ξ",
        "omicron" => "ο",
        "pi" => "π",
        "rho" => "ρ",
        "sigmaf" => "ς",
        "sigma" => "σ",
        "tau" => "τ",
        "upsilon" => "υ",
        "phi" => "φ",
        "chi" => "χ",
        "psi" => "ψ",
        "omega" => "ω",
        "thetasym" => "ϑ",
        "upsih" => "ϒ",
        "piv" => "ϖ",
        // Common HTML5 additions
        "AMP" => "&",
        "LT" => "<",
        "GT" => ">",
        "QUOT" => "\"",
        "COPY" => "©",
        "REG" => "®",
        "NewLine" => "\n",
        "Tab" => "\t",
        "nbhy" => "\u{2011}",
        "hyphen" => "‐",
        "dash" => "‐",
        "horbar" => "―",
        "lsquor" => "‚",
        "rsquor" => "’",
        "ldquor" => "„",
        "rdquor" => "”",
        "check" => "✓",
        "cross" => "✗",
        "star" => "☆",
        "starf" => "★",
        "phone" => "☎",
        "female" => "♀",
        "male" => "♂",
        "sharp" => "♯",
        "flat" => "♭",
        "natural" => "♮",
        "numero" => "№",
        "half" => "½",
        "frac13" => "⅓",
        "frac23" => "⅔",
        "frac18" => "⅛",
        "incare" => "℅",
        "ohm" => "Ω",
        "mldr" => "…",
        "nldr" => "‥",
        "comma" => ",",
        "period" => ".",
        "colon" => ":",
        "semi" => ";",
        "excl" => "!",
        "quest" => "?",
        "num" => "#",
        "dollar" => "$",
        "percnt" => "%",
        "ast" => "*",
        "plus" => "+",
        "equals" => "=",
        "lpar" => "(",
        "rpar" => ")",
        "lsqb" => "[",
        "rsqb" => "]",
        "lbrack" => "[",
        "rbrack" => "]",
        "lcub" => "{",
        "rcub" => "}",
        "lbrace" => "{",
        "rbrace" => "}",
        "sol" => "/",
        "bsol" => "\\",
        "verbar" => "|",
        "vert" => "|",
        "lowbar" => "_",
        "grave" => "`",
        "Hat" => "^",
        "commat" => "@",
        "hairsp" => "\u{200a}",
        "puncsp" => "\u{2008}",
        "numsp" => "\u{2007}",
        "emsp13" => "\u{2004}",
        "emsp14" => "\u{2005}",
        "ZeroWidthSpace" => "\u{200b}",
        "NoBreak" => "\u{2060}",
        "NonBreakingSpace" => "\u{a0}",
        "TRADE" => "™",
        "bullet" => "•",
        "rarrw" => "↝",
        "larrb" => "⇤",
        "rarrb" => "⇥",
        "leftarrow" => "←",
        "rightarrow" => "→",
        "uparrow" => "↑",
        "downarrow" => "↓",
        "Rightarrow" => "⇒",
        "Leftarrow" => "⇐",
        "caret" => "⁁",
        "divonx" => "⋇",
        "leq" => "≤",
        "geq" => "≥",
        "neq" => "≠",
        "approx" => "≈",
        "pm" => "±",
        "mnplus" => "∓",
        "centerdot" => "·",
        "bigstar" => "★",
        "squ" => "□",
        "square" => "□",
        "squf" => "▪",
        "blacksquare" => "▪",
        "rect" => "▭",
        "lozenge" => "◊",
        "cir" => "○",
        _ => return None,
    })
}

/// Decodes a numeric character reference body (`#123` or `#x1F`, without `&`/`;`).
/// Invalid and forbidden code points become U+FFFD; NUL and C0/C1 controls other than
/// tab/newline are dropped, C1 controls are mapped through windows-1252 as browsers do.
pub(crate) fn numeric(body: &str) -> Option<Option<char>> {
    let digits = body.strip_prefix('#')?;
    let value = if let Some(hex) = digits
        .strip_prefix('x')
        .or_else(|| digits.strip_prefix('X'))
    {
        if hex.is_empty() || hex.len() > 8 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        u32::from_str_radix(hex, 16).ok()?
    } else {
        if digits.is_empty() || digits.len() > 10 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        digits
            .parse::<u64>()
            .ok()
            .map(|v| u32::try_from(v).unwrap_or(u32::MAX))?
    };
    Some(match value {
        0x09 | 0x0a | 0x0d => char::from_u32(value),
        0..=0x1f | 0x7f => None,
        0x80..=0x9f => Some(windows_1252_c1(value)),
        _ => Some(char::from_u32(value).unwrap_or('\u{fffd}')),
    })
}

fn windows_1252_c1(v: u32) -> char {
    const TABLE: [char; 32] = [
        '€', '\u{81}', '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', '\u{8d}', 'Ž',
        '\u{8f}', '\u{90}', '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', '\u{9d}',
        'ž', 'Ÿ',
    ];
    let idx = v.wrapping_sub(0x80) as usize;
    TABLE.get(idx).copied().unwrap_or('\u{fffd}')
}

/// Outcome flags of [`decode`].
#[derive(Default, Clone, Copy, Debug)]
pub(crate) struct DecodeFlags {
    /// A reference that is not one of XML's five predefined entities, or a bare `&`, was met:
    /// fine in HTML, not well-formed in XML.
    pub(crate) not_xml: bool,
}

/// Resolves character references in `s`. Unknown names and bare `&` are kept literally.
/// A reference must end with `;` (legacy no-semicolon forms such as `&copy=2` stay text).
pub(crate) fn decode<'a>(s: &'a str, flags: &mut DecodeFlags) -> Cow<'a, str> {
    if memchr::memchr(b'&', s.as_bytes()).is_none() {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    decode_into(s, flags, |piece| out.push_str(piece));
    Cow::Owned(out)
}

/// Like [`decode`], handing the decoded text to `sink` piece by piece.
pub(crate) fn decode_into(s: &str, flags: &mut DecodeFlags, mut sink: impl FnMut(&str)) {
    let mut rest = s;
    while let Some(amp) = memchr::memchr(b'&', rest.as_bytes()) {
        sink(&rest[..amp]);
        // `rest[amp]` is '&'; a reference name is at most 32 bytes long.
        let after = &rest[amp + 1..];
        // The common ones first.
        let quick = [
            ("amp;", "&"),
            ("lt;", "<"),
            ("gt;", ">"),
            ("quot;", "\""),
            ("#39;", "'"),
        ];
        if let Some((pat, text)) = quick.iter().find(|(p, _)| after.starts_with(p)) {
            sink(text);
            rest = &after[pat.len()..];
            continue;
        }
        let semi = after
            .bytes()
            .take(33)
            .position(|b| b == b';' || b == b'&' || b == b'<' || b.is_ascii_whitespace());
        let mut consumed = false;
        if let Some(end) = semi {
            if after.as_bytes().get(end) == Some(&b';') {
                let body = &after[..end];
                if body.starts_with('#') {
                    if let Some(ch) = numeric(body) {
                        if let Some(c) = ch {
                            let mut buf = [0u8; 4];
                            sink(c.encode_utf8(&mut buf));
                        }
                        rest = &after[end + 1..];
                        consumed = true;
                    }
                } else if let Some(text) = named(body) {
                    if !matches!(body, "amp" | "lt" | "gt" | "quot" | "apos") {
                        flags.not_xml = true;
                    }
                    sink(text);
                    rest = &after[end + 1..];
                    consumed = true;
                }
            }
        }
        if !consumed {
            flags.not_xml = true;
            sink("&");
            rest = after;
        }
    }
    sink(rest);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_table() {
        let cases = [
            ("a &amp; b", "a & b", false),
            (
                "Fish & Chips &amp; more &lt;3",
                "Fish & Chips & more <3",
                true,
            ),
            (
                "?page=1&copy=2;mode=x &amp; done",
                "?page=1&copy=2;mode=x & done",
                true,
            ),
            ("x&nbsp;y&hellip;&mdash;", "x\u{a0}y…—", true),
            ("&#65;&#x42;&#X43;&#0;&#150;&#xD800;", "ABC–\u{fffd}", false),
            ("&unknown; &", "&unknown; &", true),
            (
                "&#9999999999; &#99999999999;",
                "\u{fffd} &#99999999999;",
                true,
            ),
        ];
        for (input, want, not_xml) in cases {
            let mut f = DecodeFlags::default();
            assert_eq!(decode(input, &mut f), want, "{input}");
            assert_eq!(f.not_xml, not_xml, "{input}");
        }
    }
}
