//! Numbers as words, for `range` lists: English as CLDR's spell-out rules write them
//! ("twenty-one", "one hundred twenty-one"; the hyphen also as a space), Russian cardinals in
//! every case, masculine, feminine and neuter ("двадцать один", "двадцать одна",
//! "двадцати одного", …). Other languages have digits only.

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
}

fn ru_unit(d: usize, case: usize, g: Gender) -> &'static str {
    match (d, g) {
        (1, Gender::F) => RU_ONE_F[case],
        (1, Gender::N) => RU_ONE_N[case],
        (2, Gender::F) => RU_TWO_F[case],
        _ => RU_UNITS[case][d],
    }
}

fn ru_below_thousand(n: usize, case: usize, g: Gender, parts: &mut Vec<&'static str>) {
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
            parts.push(RU_TENS[case][r / 10]);
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
        for g in [Gender::M, Gender::F, Gender::N] {
            let mut parts = Vec::new();
            let th = n / 1000;
            let r = n % 1000;
            if th > 0 {
                if th == 1 {
                    parts.push(RU_ONE_F[case]);
                } else {
                    ru_below_thousand(th, case, Gender::F, &mut parts);
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
                ru_below_thousand(r, case, g, &mut parts);
            }
            out.push(parts.join(" "));
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
