//! Numbers as words, for `range` lists: English as CLDR's spell-out rules write them
//! ("twenty-one", "one hundred twenty-one"; the hyphen also as a space), Russian cardinals in
//! every case, masculine, feminine and neuter ("двадцать один", "двадцать одна",
//! "двадцати одного", …). Other languages have digits only.

use std::collections::HashMap;
use std::sync::OnceLock;

/// Every way to say `n` in `language` (`en`, `ru`, or a region of them), empty when none.
pub(crate) fn words(language: &str, n: i64) -> Vec<String> {
    let family = language.split(['-', '_']).next().unwrap_or("");
    let mut out: Vec<String> = match family {
        "en" => english(n).into_iter().collect(),
        "ru" => russian(n),
        _ => Vec::new(),
    };
    let broken: Vec<String> = out
        .iter()
        .filter(|w| w.contains('-'))
        .map(|w| w.replace('-', " "))
        .collect();
    out.extend(broken);
    let mut seen = Vec::new();
    out.retain(|w| {
        if seen.contains(w) {
            false
        } else {
            seen.push(w.clone());
            true
        }
    });
    out
}

const EN_UNITS: [&str; 20] = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
];
const EN_TENS: [&str; 10] = [
    "", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
];

fn english(n: i64) -> Option<String> {
    if n < 0 {
        return english(n.checked_neg()?).map(|w| format!("minus {w}"));
    }
    fn below_thousand(n: i64) -> String {
        let mut parts = Vec::new();
        let h = n / 100;
        let r = n % 100;
        if h > 0 {
            parts.push(format!("{} hundred", EN_UNITS[h as usize]));
        }
        if r > 0 || h == 0 {
            if r < 20 {
                parts.push(EN_UNITS[r as usize].to_owned());
            } else if r % 10 == 0 {
                parts.push(EN_TENS[(r / 10) as usize].to_owned());
            } else {
                parts.push(format!(
                    "{}-{}",
                    EN_TENS[(r / 10) as usize],
                    EN_UNITS[(r % 10) as usize]
                ));
            }
        }
        parts.join(" ")
    }
    if n >= 1_000_000_000 {
        return None;
    }
    let mut parts = Vec::new();
    let m = n / 1_000_000;
    let t = (n / 1000) % 1000;
    let r = n % 1000;
    if m > 0 {
        parts.push(format!("{} million", below_thousand(m)));
    }
    if t > 0 {
        parts.push(format!("{} thousand", below_thousand(t)));
    }
    if r > 0 || parts.is_empty() {
        parts.push(below_thousand(r));
    }
    Some(parts.join(" "))
}

/// Cases: nominative, genitive, dative, accusative, instrumental, prepositional.
const CASES: usize = 6;

// Units 0..9, masculine, per case (accusative as nominative for inanimate counting).
const RU_UNITS: [[&str; 10]; CASES] = [
    [
        "ноль",
        "один",
        "два",
        "три",
        "четыре",
        "пять",
        "шесть",
        "семь",
        "восемь",
        "девять",
    ],
    [
        "ноля",
        "одного",
        "двух",
        "трех",
        "четырех",
        "пяти",
        "шести",
        "семи",
        "восьми",
        "девяти",
    ],
    [
        "нолю",
        "одному",
        "двум",
        "трем",
        "четырем",
        "пяти",
        "шести",
        "семи",
        "восьми",
        "девяти",
    ],
    [
        "ноль",
        "один",
        "два",
        "три",
        "четыре",
        "пять",
        "шесть",
        "семь",
        "восемь",
        "девять",
    ],
    [
        "нулем",
        "одним",
        "двумя",
        "тремя",
        "четырьмя",
        "пятью",
        "шестью",
        "семью",
        "восемью",
        "девятью",
    ],
    [
        "нуле",
        "одном",
        "двух",
        "трех",
        "четырех",
        "пяти",
        "шести",
        "семи",
        "восьми",
        "девяти",
    ],
];
// One and two, feminine and neuter, per case.
const RU_ONE_F: [&str; CASES] = ["одна", "одной", "одной", "одну", "одной", "одной"];
const RU_ONE_N: [&str; CASES] = ["одно", "одного", "одному", "одно", "одним", "одном"];
// One, plural ("одни сутки"), per case.
const RU_ONE_P: [&str; CASES] = ["одни", "одних", "одним", "одни", "одними", "одних"];
const RU_TWO_F: [&str; CASES] = ["две", "двух", "двум", "две", "двумя", "двух"];
const RU_TEENS: [&str; 10] = [
    "десять",
    "одиннадцать",
    "двенадцать",
    "тринадцать",
    "четырнадцать",
    "пятнадцать",
    "шестнадцать",
    "семнадцать",
    "восемнадцать",
    "девятнадцать",
];
const RU_TENS: [[&str; 10]; CASES] = [
    [
        "",
        "",
        "двадцать",
        "тридцать",
        "сорок",
        "пятьдесят",
        "шестьдесят",
        "семьдесят",
        "восемьдесят",
        "девяносто",
    ],
    [
        "",
        "",
        "двадцати",
        "тридцати",
        "сорока",
        "пятидесяти",
        "шестидесяти",
        "семидесяти",
        "восьмидесяти",
        "девяноста",
    ],
    [
        "",
        "",
        "двадцати",
        "тридцати",
        "сорока",
        "пятидесяти",
        "шестидесяти",
        "семидесяти",
        "восьмидесяти",
        "девяноста",
    ],
    [
        "",
        "",
        "двадцать",
        "тридцать",
        "сорок",
        "пятьдесят",
        "шестьдесят",
        "семьдесят",
        "восемьдесят",
        "девяносто",
    ],
    [
        "",
        "",
        "двадцатью",
        "тридцатью",
        "сорока",
        "пятьюдесятью",
        "шестьюдесятью",
        "семьюдесятью",
        "восемьюдесятью",
        "девяноста",
    ],
    [
        "",
        "",
        "двадцати",
        "тридцати",
        "сорока",
        "пятидесяти",
        "шестидесяти",
        "семидесяти",
        "восьмидесяти",
        "девяноста",
    ],
];
const RU_HUNDREDS: [[&str; 10]; CASES] = [
    [
        "",
        "сто",
        "двести",
        "триста",
        "четыреста",
        "пятьсот",
        "шестьсот",
        "семьсот",
        "восемьсот",
        "девятьсот",
    ],
    [
        "",
        "ста",
        "двухсот",
        "трехсот",
        "четырехсот",
        "пятисот",
        "шестисот",
        "семисот",
        "восьмисот",
        "девятисот",
    ],
    [
        "",
        "ста",
        "двумстам",
        "тремстам",
        "четыремстам",
        "пятистам",
        "шестистам",
        "семистам",
        "восьмистам",
        "девятистам",
    ],
    [
        "",
        "сто",
        "двести",
        "триста",
        "четыреста",
        "пятьсот",
        "шестьсот",
        "семьсот",
        "восемьсот",
        "девятьсот",
    ],
    [
        "",
        "ста",
        "двумястами",
        "тремястами",
        "четырьмястами",
        "пятьюстами",
        "шестьюстами",
        "семьюстами",
        "восемьюстами",
        "девятьюстами",
    ],
    [
        "",
        "ста",
        "двухстах",
        "трехстах",
        "четырехстах",
        "пятистах",
        "шестистах",
        "семистах",
        "восьмистах",
        "девятистах",
    ],
];
// тысяча: singular per case, and the plural forms after 2–4 and after 5+ per case.
const RU_THOUSAND_ONE: [&str; CASES] =
    ["тысяча", "тысячи", "тысяче", "тысячу", "тысячей", "тысяче"];
const RU_THOUSAND_FEW: [&str; CASES] = [
    "тысячи",
    "тысяч",
    "тысячам",
    "тысячи",
    "тысячами",
    "тысячах",
];
const RU_THOUSAND_MANY: [&str; CASES] =
    ["тысяч", "тысяч", "тысячам", "тысяч", "тысячами", "тысячах"];

#[derive(Clone, Copy)]
enum Gender {
    M,
    F,
    N,
    /// Plural, as CLDR's `spellout-cardinal-plural` rules say one ("одни").
    P,
}

fn ru_unit(d: usize, case: usize, g: Gender) -> &'static str {
    match (d, g) {
        (1, Gender::F) => RU_ONE_F[case],
        (1, Gender::N) => RU_ONE_N[case],
        (1, Gender::P) => RU_ONE_P[case],
        (2, Gender::F) => RU_TWO_F[case],
        _ => RU_UNITS[case][d],
    }
}

/// `tens_case`: the case of "двадцать" and "тридцать", the same as `case` but for CLDR's
/// masculine locative, which keeps them nominative ("двадцать одном", but "сорока одном").
fn ru_below_thousand(
    n: usize,
    case: usize,
    tens_case: usize,
    g: Gender,
    parts: &mut Vec<&'static str>,
) {
    let h = n / 100;
    let r = n % 100;
    if h > 0 {
        parts.push(RU_HUNDREDS[case][h]);
    }
    if (10..20).contains(&r) {
        let t = RU_TEENS[r - 10];
        parts.push(match case {
            0 | 3 => t,
            4 => TEENS_INS[r - 10],
            _ => TEENS_OBL[r - 10],
        });
    } else {
        if r >= 20 {
            let c = if matches!(r / 10, 2 | 3) {
                tens_case
            } else {
                case
            };
            parts.push(RU_TENS[c][r / 10]);
        }
        if !r.is_multiple_of(10) || (r == 0 && h == 0) {
            parts.push(ru_unit(r % 10, case, g));
        }
    }
}

const TEENS_OBL: [&str; 10] = [
    "десяти",
    "одиннадцати",
    "двенадцати",
    "тринадцати",
    "четырнадцати",
    "пятнадцати",
    "шестнадцати",
    "семнадцати",
    "восемнадцати",
    "девятнадцати",
];
const TEENS_INS: [&str; 10] = [
    "десятью",
    "одиннадцатью",
    "двенадцатью",
    "тринадцатью",
    "четырнадцатью",
    "пятнадцатью",
    "шестнадцатью",
    "семнадцатью",
    "восемнадцатью",
    "девятнадцатью",
];

fn russian(n: i64) -> Vec<String> {
    if !(0..1_000_000).contains(&n) {
        return Vec::new();
    }
    let n = n as usize;
    let mut out = Vec::new();
    for case in 0..CASES {
        let genders = [
            (Gender::M, case),
            (Gender::F, case),
            (Gender::N, case),
            (Gender::P, case),
            (Gender::M, if case == 5 { 0 } else { case }),
        ];
        for (g, tens_case) in genders {
            let mut parts = Vec::new();
            let th = n / 1000;
            let r = n % 1000;
            if th > 0 {
                if th == 1 {
                    parts.push(RU_ONE_F[case]);
                } else {
                    ru_below_thousand(th, case, case, Gender::F, &mut parts);
                }
                let last2 = th % 100;
                let last = th % 10;
                parts.push(if (11..15).contains(&last2) {
                    RU_THOUSAND_MANY[case]
                } else if last == 1 {
                    RU_THOUSAND_ONE[case]
                } else if (2..5).contains(&last) {
                    RU_THOUSAND_FEW[case]
                } else {
                    RU_THOUSAND_MANY[case]
                });
            }
            if r > 0 || th == 0 {
                ru_below_thousand(r, case, tens_case, g, &mut parts);
            }
            let w = parts.join(" ");
            if !out.contains(&w) {
                out.push(w);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn english_as_cldr_spells_it() {
        assert_eq!(words("en", 21), ["twenty-one", "twenty one"]);
        assert_eq!(
            words("en", 121),
            ["one hundred twenty-one", "one hundred twenty one"]
        );
        assert_eq!(
            words("en", 2345)[0],
            "two thousand three hundred forty-five"
        );
        assert_eq!(words("en", 0), ["zero"]);
    }

    #[test]
    fn russian_in_cases_and_genders() {
        let w = words("ru", 21);
        for form in [
            "двадцать один",
            "двадцать одна",
            "двадцать одно",
            "двадцати одного",
        ] {
            assert!(w.iter().any(|x| x == form), "{form} in {w:?}");
        }
        assert!(words("ru", 2345)
            .iter()
            .any(|x| x == "две тысячи триста сорок пять"));
        assert!(words("ru", 1000).iter().any(|x| x == "одна тысяча"));
        assert!(words("ru", 100).iter().any(|x| x == "сто"));
        assert!(words("de", 5).is_empty());
    }
}

/// The most words a number said in words may take ("nine hundred ninety nine million …").
const MAX_NUMBER_WORDS: usize = 16;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Tok {
    /// A number of one word: "seven", "twenty", "двести".
    Num(i64),
    /// "hundred", "thousand", "million", "тысяча" and its forms.
    Mul(i64),
    Minus,
}

/// The words numbers are made of in one language, for reading a number said in words without
/// spelling out every number of a range: a span of the sentence is read as a value, and
/// accepted only when [`words`] of that value holds it, so what matches is exactly what the
/// spelled-out range would match.
#[derive(Debug, Clone, Default)]
pub(crate) struct Lexicon {
    language: String,
    toks: HashMap<Vec<char>, Tok>,
}

/// A number said in words at the start of a text: its length in characters, its value, and
/// the place of its spelling among [`words`] (for the order the spelled-out range had).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Spelled {
    pub(crate) len: u32,
    pub(crate) value: i64,
    pub(crate) variant: u32,
}

fn is_break(c: char) -> bool {
    matches!(c, ' ' | '-' | '_')
}

impl Lexicon {
    /// The lexicon of `language`, made once per language family (English, Russian, and one
    /// empty lexicon for the rest).
    pub(crate) fn of(language: &str) -> &'static Lexicon {
        static EN: OnceLock<Lexicon> = OnceLock::new();
        static RU: OnceLock<Lexicon> = OnceLock::new();
        static NONE: OnceLock<Lexicon> = OnceLock::new();
        match language.split(['-', '_']).next().unwrap_or("") {
            "en" => EN.get_or_init(|| Lexicon::new("en")),
            "ru" => RU.get_or_init(|| Lexicon::new("ru")),
            _ => NONE.get_or_init(Lexicon::default),
        }
    }

    /// The lexicon of `language`; empty (nothing said in words) for languages without words.
    pub(crate) fn new(language: &str) -> Lexicon {
        let mut toks: HashMap<Vec<char>, Tok> = HashMap::new();
        let mut one = |w: &str, t: Tok| {
            if !w.is_empty() && !w.contains(is_break) {
                toks.entry(w.chars().map(crate::text::fold).collect())
                    .or_insert(t);
            }
        };
        let family = language.split(['-', '_']).next().unwrap_or("");
        match family {
            "en" => {
                for n in 0..100 {
                    for w in words(language, n) {
                        one(&w, Tok::Num(n));
                    }
                }
                one("hundred", Tok::Mul(100));
                one("thousand", Tok::Mul(1000));
                one("million", Tok::Mul(1_000_000));
                one("minus", Tok::Minus);
            }
            "ru" => {
                for n in (0..100).chain((100..1000).step_by(100)) {
                    for w in words(language, n) {
                        one(&w, Tok::Num(n));
                    }
                }
                for w in RU_THOUSAND_ONE
                    .iter()
                    .chain(&RU_THOUSAND_FEW)
                    .chain(&RU_THOUSAND_MANY)
                {
                    one(w, Tok::Mul(1000));
                }
            }
            _ => {}
        }
        Lexicon {
            language: language.to_owned(),
            toks,
        }
    }

    /// Whether any number is said in words in this language.
    pub(crate) fn is_empty(&self) -> bool {
        self.toks.is_empty()
    }

    /// Every number said in words at the start of `s` (folded characters, as the matcher
    /// reads them) that `accept` takes, in the order of value then spelling; returns the work
    /// done (words looked up), which is bounded by [`MAX_NUMBER_WORDS`] and the word lengths.
    pub(crate) fn spelled(
        &self,
        s: &[char],
        accept: impl Fn(i64) -> bool,
        out: &mut Vec<Spelled>,
    ) -> u64 {
        let mut work = 0u64;
        let first = out.len();
        let mut toks: Vec<Tok> = Vec::new();
        let mut i = 0usize;
        for _ in 0..MAX_NUMBER_WORDS {
            let j = s[i..]
                .iter()
                .position(|&c| is_break(c))
                .map_or(s.len(), |k| i + k);
            if j == i {
                break;
            }
            // A number may end inside a word, as the spelled-out range's text may.
            for e in i + 1..=j {
                work += 1;
                let Some(&t) = self.toks.get(&s[i..e]) else {
                    continue;
                };
                toks.push(t);
                let value = compose(&toks);
                toks.pop();
                if let Some(v) = value.filter(|&v| accept(v)) {
                    if let Some(variant) = self.spells(&s[..e], v) {
                        out.push(Spelled {
                            len: e as u32,
                            value: v,
                            variant,
                        });
                    }
                }
            }
            let Some(&t) = self.toks.get(&s[i..j]) else {
                break;
            };
            toks.push(t);
            if j < s.len() {
                i = j + 1;
            } else {
                break;
            }
        }
        if let Some(tail) = out.get_mut(first..) {
            tail.sort_by_key(|x| (x.value, x.variant));
        }
        work
    }

    /// The place among [`words`] of `value` of a spelling `span` reads as: a space of the
    /// spelling also takes `-` and `_`, as the matcher's break-words do.
    fn spells(&self, span: &[char], value: i64) -> Option<u32> {
        words(&self.language, value)
            .iter()
            .position(|w| {
                let mut n = 0usize;
                w.chars().map(crate::text::fold).all(|c| {
                    let ok = span
                        .get(n)
                        .is_some_and(|&x| x == c || (c == ' ' && matches!(x, '-' | '_')));
                    n += 1;
                    ok
                }) && n == span.len()
            })
            .map(|p| p as u32)
    }
}

/// The value the words read as, leniently ("twenty hundred" reads as 2000): [`Lexicon::spells`]
/// accepts only a correct spelling.
fn compose(toks: &[Tok]) -> Option<i64> {
    let (neg, toks) = match toks.split_first() {
        Some((Tok::Minus, rest)) => (true, rest),
        _ => (false, toks),
    };
    if toks.is_empty() {
        return None;
    }
    let (mut total, mut group) = (0i64, 0i64);
    for t in toks {
        match *t {
            Tok::Num(v) => group = group.saturating_add(v),
            Tok::Mul(100) => group = group.max(1).saturating_mul(100),
            Tok::Mul(m) => {
                total = total.saturating_add(group.max(1).saturating_mul(m));
                group = 0;
            }
            Tok::Minus => return None,
        }
    }
    let v = total.saturating_add(group);
    Some(if neg { -v } else { v })
}

#[cfg(test)]
mod lexicon_tests {
    use super::*;

    fn read(lex: &Lexicon, text: &str) -> Vec<(u32, i64)> {
        let s: Vec<char> = text.chars().map(crate::text::fold).collect();
        let mut out = Vec::new();
        lex.spelled(&s, |_| true, &mut out);
        out.iter().map(|x| (x.len, x.value)).collect()
    }

    #[test]
    fn every_spelling_reads_back_as_its_number() {
        for lang in ["en", "ru"] {
            let lex = Lexicon::new(lang);
            for n in (-20..=1100)
                .chain((1100..=10_000).step_by(89))
                .chain([99_999, 123_456, 999_999])
            {
                for w in words(lang, n) {
                    let len = w.chars().count() as u32;
                    assert!(
                        read(&lex, &w).contains(&(len, n)),
                        "{lang} {n} {w:?}: {:?}",
                        read(&lex, &w)
                    );
                }
            }
        }
    }

    #[test]
    fn russian_as_cldr_spells_the_plural_and_the_masculine_locative() {
        assert!(words("ru", 1).contains(&"одни".to_owned()));
        assert!(words("ru", 1).contains(&"одними".to_owned()));
        assert!(words("ru", 21).contains(&"двадцать одном".to_owned()));
        assert!(words("ru", 22).contains(&"двадцать двух".to_owned()));
        assert!(words("ru", 41).contains(&"сорока одном".to_owned()));
        assert!(!words("ru", 41).contains(&"сорок одном".to_owned()));
    }

    #[test]
    fn prefixes_and_breaks_read_as_the_spelled_range_would() {
        let en = Lexicon::new("en");
        assert_eq!(read(&en, "twenty one cats"), vec![(6, 20), (10, 21)]);
        assert_eq!(read(&en, "twenty_one"), vec![(6, 20), (10, 21)]);
        assert_eq!(read(&en, "seventy"), vec![(5, 7), (7, 70)]);
        assert_eq!(read(&en, "twenty hundred"), vec![(6, 20)]);
        assert!(read(&en, "cats").is_empty());
        let ru = Lexicon::new("ru");
        assert_eq!(
            read(&ru, "двадцати одного"),
            vec![(3, 2), (8, 20), (15, 21)]
        );
        assert_eq!(read(&ru, "две тысячи"), vec![(3, 2), (10, 2000)]);
        assert!(Lexicon::new("de").is_empty());
    }
}
