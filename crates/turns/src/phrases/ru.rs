//! What Maven says in Russian, and the Russian words it hears (yes and no, the built-in
//! intents, number words). The only source file of this crate outside its tests that holds
//! Cyrillic text.

use std::fmt::Display;

// --- Words heard ---------------------------------------------------------------------------

/// A whole sentence that is a yes.
pub const YES: &[&str] = &["да", "д", "давай"];
/// A whole sentence that is a no.
pub const NO: &[&str] = &["нет", "н", "не надо", "отмена"];
/// The starts of a spoken sentence that make it a no, whatever follows.
pub const NO_STARTS: &[&str] = &["не "];
/// The words of a spoken yes (before a one-time word).
pub const SPOKEN_YES: &[&str] = &["да", "ага"];
/// A slot's words read as a boolean.
pub const TRUE: &[&str] = &["да"];
/// A slot's words read as a boolean.
pub const FALSE: &[&str] = &["нет"];
/// Letters a transcript is written with that the words heard are not: each made the other.
pub const FOLD: &[(char, char)] = &[('ё', 'е')];

/// Sentences that ask for the feeds digest.
pub const DIGEST: &[&str] = &[
    "что нового в лентах",
    "что нового в моих лентах",
    "что нового",
    "новости",
    "ленты",
];
/// Sentences that ask what Maven can do.
pub const HELP: &[&str] = &["помощь", "что ты умеешь", "что ты можешь"];
/// The starts of a sentence that searches the notes (the rest is the query).
pub const NOTES: &[&str] = &[
    "заметки про ",
    "заметки о ",
    "заметки об ",
    "найди заметки про ",
];

/// Number words, zero to nineteen.
pub const UNITS: &[&str] = &[
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
/// Tens words, by their digit (none for 0 and 1).
pub const TENS: &[&str] = &[
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
];
/// Other forms of a number word: feminine and neuter.
pub const UNIT_FORMS: &[(&str, usize)] = &[("одна", 1), ("одно", 1), ("две", 2)];

// --- Acts ----------------------------------------------------------------------------------

/// An act refused: the allowlist's reason.
pub fn wont(reason: &dyn Display) -> String {
    format!("Не выполню: {reason}.")
}

/// The line before an act's output: who returned it, and whether as an error.
pub fn ran_head(act: &str, server: Option<&str>, ok: bool) -> String {
    match (server, ok) {
        (Some(s), true) => format!("{act} выполнено; MCP-сервер {s:?} ответил:"),
        (Some(s), false) => format!("{act} выполнено; MCP-сервер {s:?} сообщил об ошибке:"),
        (None, true) => format!("{act} выполнено; локальная команда ответила:"),
        (None, false) => format!("{act} выполнено; локальная команда сообщила об ошибке:"),
    }
}

/// An act that returned no text.
pub fn returned_nothing() -> String {
    "(ничего)".to_owned()
}

/// A turn that names no act by that name.
pub fn no_such_act(name: &str) -> String {
    format!("Действия {name} нет.")
}

/// The rest of the sentence an act would run with, quoted.
pub fn with_tail(tail: &str) -> String {
    format!(" с {tail:?}")
}

/// No optional argument left unset.
pub fn none_unset() -> String {
    "нет".to_owned()
}

/// The named arguments an act would run with, and the optional ones left unset.
pub fn with_named(shown: &str, unset: &str) -> String {
    format!(" с {shown} (не заданы: {unset})")
}

/// How many invisible characters a question's arguments hold.
pub fn invisible(n: usize) -> String {
    format!(" В аргументах невидимых символов: {n}, каждый показан как \\u{{…}}.")
}

/// A typed question before an act that may write.
pub fn run_it(act: &str, with: &str, hidden: &str) -> String {
    format!("Собираюсь выполнить {act}{with}.{hidden} Выполнить? (да/нет)")
}

/// A spoken question that cannot be asked by voice, and why.
pub fn needs_the_screen(why: &str) -> String {
    format!("Это нужно смотреть на экране: {why}. Ничего не ждёт; наберите это в maven say.")
}

/// How to confirm a spoken question: yes and its one-time word.
pub fn say_yes_and(word: &str) -> String {
    format!("Чтобы выполнить, скажите: да, {word}.")
}

/// A spoken question before an act with no arguments.
pub fn about_to_run_and(act: &str, ask: &str) -> String {
    format!("Собираюсь выполнить {act}. {ask}")
}

/// The optional arguments a spoken question leaves unset.
pub fn not_set(unset: &str) -> String {
    format!(" (не заданы: {unset})")
}

/// The start of a spoken question before an act with arguments.
pub fn about_to_run(act: &str) -> String {
    format!("Собираюсь выполнить {act}")
}

/// The arguments of a spoken question, as read.
pub fn with_said(said: &str, not_set: &str) -> String {
    format!("с {said}{not_set}.")
}

// --- Confirmations -------------------------------------------------------------------------

/// A spoken yes without the question's word: the question again.
pub fn plain_yes(act: &str, word: &str) -> String {
    format!("Одного «да» мало, чтобы выполнить {act}. Чтобы выполнить, скажите: да, {word}.")
}

/// Why a spoken answer ends the question: another word of the lists.
pub fn wrong_word() -> String {
    "названо не то слово".to_owned()
}

/// Why a spoken answer ends the question: the word with too much else.
pub fn not_alone() -> String {
    "подтверждение — это «да» и слово, почти без других слов".to_owned()
}

/// A spoken question ended by its answer, and why.
pub fn not_confirmed(act: &str, why: &str) -> String {
    format!(
        "Это не подтверждение {act}: {why}. Ничего не выполнено; попросите снова, будет новое слово."
    )
}

/// A yes or a no with no question pending.
pub fn nothing_to_confirm() -> String {
    "Подтверждать нечего.".to_owned()
}

/// A yes after the question expired.
pub fn too_late(act: &str) -> String {
    format!("Слишком поздно: запрос на {act} истёк. Попросите ещё раз.")
}

/// A no to a question.
pub fn cancelled(act: &str) -> String {
    format!("Отменено: {act} не выполнено.")
}

// --- Voice ---------------------------------------------------------------------------------

/// An argument longer than a voice reads.
pub fn too_long(name: &str, chars: usize, max: usize) -> String {
    format!("в {name} {chars} символов, больше, чем читается вслух ({max})")
}

/// Arguments longer together than a voice reads.
pub fn too_much(chars: usize, max: usize) -> String {
    format!("в аргументах {chars} символов, больше, чем читается вслух ({max})")
}

/// An argument that is a list or an object.
pub fn nested(name: &str) -> String {
    format!("{name} — список или объект, его не прочесть вслух точно")
}

/// An argument with invisible characters.
pub fn invisible_in(name: &str, count: usize) -> String {
    format!("в {name} невидимых символов: {count}")
}

/// An argument with a character a voice would not say as written.
pub fn strange(name: &str, code: &str) -> String {
    format!("в {name} есть {code}, голос не произнесёт его как написано")
}

/// An argument with a word of Latin and Cyrillic letters.
pub fn mixed(name: &str) -> String {
    format!("в {name} латинские и русские буквы в одном слове")
}

/// Spoken: whose words follow (a server's, or the local command's).
pub fn output_says(server: Option<&str>) -> String {
    match server {
        Some(s) => format!("{s} отвечает:"),
        None => "Команда отвечает:".to_owned(),
    }
}

/// Spoken: a server's question follows.
pub fn server_asks(server: &str) -> String {
    format!("{server} спрашивает:")
}

/// Spoken: how many more items a list has.
pub fn and_more(n: usize) -> String {
    format!("; и ещё {n}")
}

/// Spoken: how many more lines a text has.
pub fn and_more_lines(n: usize) -> String {
    format!("и ещё строк: {n}")
}

/// Spoken: an address, by its host.
pub fn link(host: Option<&str>) -> String {
    match host {
        None => "ссылка".to_owned(),
        Some(h) => format!("ссылка на {h}"),
    }
}

// --- Feeds and notes -----------------------------------------------------------------------

/// The digest with no feed configured.
pub fn no_feeds() -> String {
    "Лент пока нет. Добавьте ленту: `maven feeds add URL` (адрес ленты или страницы сайта, которая на неё ссылается).".to_owned()
}

/// The feeds whose polls fail.
pub fn failing(feeds: &str) -> String {
    format!("Не обновляются: {feeds}.")
}

/// The digest with nothing new.
pub fn nothing_new() -> String {
    "В лентах ничего нового с тех пор, как вы спрашивали.".to_owned()
}

/// A feed's heading in the digest.
pub fn feed_new(feed: &str, n: usize) -> String {
    format!("{feed} (новых: {n}):")
}

/// How many more items the digest left out.
pub fn and_n_more(n: usize) -> String {
    format!("…и ещё {n}.")
}

/// A notes search that found nothing.
pub fn no_notes(q: &str) -> String {
    format!("Заметок про «{q}» нет.")
}

// --- Help ----------------------------------------------------------------------------------

/// Help: an act run by its phrase alone.
pub fn say_bare(phrase: &str) -> String {
    format!("скажите «{phrase}»")
}

/// Help: an act that takes the rest of the sentence.
pub fn say_rest(phrase: &str) -> String {
    format!("скажите «{phrase} …» (остаток фразы — его аргумент)")
}

/// Help: an act that needs named arguments.
pub fn needs_named(phrase: &str) -> String {
    format!("«{phrase}» требует именованных аргументов: их заполняет только модель (блок «router», kind «llm») по вашим словам; или воспользуйтесь самим сервисом")
}

/// Help: an act that takes the rest of the sentence once its server allows it.
pub fn once_allowed(phrase: &str, allow: &str) -> String {
    format!("«{phrase} …» примет остаток фразы как аргумент, когда его назовут в allow_tools сервера: {allow}")
}

/// Help: an act that asks before it runs.
pub fn asks_first() -> String {
    " (спросит сначала)".to_owned()
}

/// What Maven can do, before the acts.
pub fn help() -> String {
    "Я могу рассказать, что нового в лентах («что нового в лентах?»), найти заметки («заметки про …»)".to_owned()
}

/// Help with no act enabled.
pub fn no_acts() -> String {
    ". Включённых действий пока нет: включите их на странице.".to_owned()
}

/// Help, before the list of acts.
pub fn and_these_acts() -> String {
    " и выполнить эти действия:".to_owned()
}

/// A sentence Maven cannot help with.
pub fn cannot_help() -> String {
    "С этим я не помогу.".to_owned()
}

/// The act a sentence nearly names.
pub fn did_you_mean(phrase: &str) -> String {
    format!(" Может быть, «{phrase}»?")
}

/// What to try instead.
pub fn try_these() -> String {
    " Попробуйте «что нового в лентах?», «заметки про …»".to_owned()
}

/// Before the list of acts, when Maven cannot help.
pub fn or_your_acts() -> String {
    " или одно из действий:".to_owned()
}

/// A template's phrase for an act.
pub fn or_say(phrase: &str) -> String {
    format!("; или скажите «{phrase}»")
}

/// The model router failed, and the rules router answered.
pub fn router_fell_back(e: &dyn Display) -> String {
    format!("(Модель не ответила — {e} — поэтому ответил маршрутизатор правил.)")
}
