//! What Maven says in English, and the English words it hears (yes and no, the built-in
//! intents, number words). Some lines are said in English whatever the turn's language (a
//! server's question, a failure, `maven say --explain`): they are here alone.

use std::fmt::Display;

// --- Words heard ---------------------------------------------------------------------------

/// A whole sentence that is a yes.
pub const YES: &[&str] = &["yes", "y", "yes please"];
/// A whole sentence that is a no.
pub const NO: &[&str] = &["no", "n", "cancel"];
/// The starts of a spoken sentence that make it a no, whatever follows.
pub const NO_STARTS: &[&str] = &["don't", "do not "];
/// The words of a spoken yes (before a one-time word).
pub const SPOKEN_YES: &[&str] = &["yes", "yeah", "yep", "yup"];
/// A slot's words read as a boolean.
pub const TRUE: &[&str] = &["true", "yes"];
/// A slot's words read as a boolean.
pub const FALSE: &[&str] = &["false", "no"];

/// Sentences that ask for the feeds digest.
pub const DIGEST: &[&str] = &[
    "what's new in my feeds",
    "whats new in my feeds",
    "what is new in my feeds",
    "what's new in the feeds",
    "what's new",
    "whats new",
    "news",
    "feeds",
    "my feeds",
];
/// Sentences that ask what Maven can do.
pub const HELP: &[&str] = &["help", "what can you do", "what can you do for me"];
/// The starts of a sentence that searches the notes (the rest is the query).
pub const NOTES: &[&str] = &[
    "notes about ",
    "notes on ",
    "notes mentioning ",
    "search notes for ",
    "search notes ",
    "find notes about ",
];

/// Number words, zero to nineteen.
pub const UNITS: &[&str] = &[
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
/// Tens words, by their digit (none for 0 and 1).
pub const TENS: &[&str] = &[
    "", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
];
/// Other forms of a number word.
pub const UNIT_FORMS: &[(&str, usize)] = &[];

// --- Acts ----------------------------------------------------------------------------------

/// An act refused: the allowlist's reason.
pub fn wont(reason: &dyn Display) -> String {
    format!("I won't run that: {reason}.")
}

/// The line before an act's output: who returned it, and whether as an error.
pub fn ran_head(act: &str, server: Option<&str>, ok: bool) -> String {
    match (server, ok) {
        (Some(s), true) => format!("{act} ran; the MCP server {s:?} returned:"),
        (Some(s), false) => format!("{act} ran; the MCP server {s:?} reported an error:"),
        (None, true) => format!("{act} ran; a local command returned:"),
        (None, false) => format!("{act} ran; a local command reported an error:"),
    }
}

/// An act that returned no text.
pub fn returned_nothing() -> String {
    "(nothing)".to_owned()
}

/// A turn that names no act by that name.
pub fn no_such_act(name: &str) -> String {
    format!("There is no act called {name}.")
}

/// The rest of the sentence an act would run with, quoted.
pub fn with_tail(tail: &str) -> String {
    format!(" with {tail:?}")
}

/// No optional argument left unset.
pub fn none_unset() -> String {
    "none".to_owned()
}

/// The named arguments an act would run with, and the optional ones left unset.
pub fn with_named(shown: &str, unset: &str) -> String {
    format!(" with {shown} (not set: {unset})")
}

/// How many invisible characters a question's arguments hold.
pub fn invisible(n: usize) -> String {
    format!(" Its arguments hold {n} invisible characters, each shown as \\u{{…}}.")
}

/// A typed question before an act that may write.
pub fn run_it(act: &str, with: &str, hidden: &str) -> String {
    format!("About to run {act}{with}.{hidden} Run it? (yes/no)")
}

/// A spoken question that cannot be asked by voice, and why.
pub fn needs_the_screen(why: &str) -> String {
    format!("This one needs the screen: {why}. Nothing is waiting; type it with maven say.")
}

/// How to confirm a spoken question: yes and its one-time word.
pub fn say_yes_and(word: &str) -> String {
    format!("To run it, say: yes, {word}.")
}

/// A spoken question before an act with no arguments.
pub fn about_to_run_and(act: &str, ask: &str) -> String {
    format!("About to run {act}. {ask}")
}

/// The optional arguments a spoken question leaves unset.
pub fn not_set(unset: &str) -> String {
    format!(" (not set: {unset})")
}

/// The start of a spoken question before an act with arguments.
pub fn about_to_run(act: &str) -> String {
    format!("About to run {act}")
}

/// The arguments of a spoken question, as read.
pub fn with_said(said: &str, not_set: &str) -> String {
    format!("with {said}{not_set}.")
}

// --- Confirmations -------------------------------------------------------------------------

/// A spoken yes without the question's word: the question again.
pub fn plain_yes(act: &str, word: &str) -> String {
    format!("A plain yes does not run {act}. To run it, say: yes, {word}.")
}

/// Why a spoken answer ends the question: another word of the lists.
pub fn wrong_word() -> String {
    "it names a word other than this question's".to_owned()
}

/// Why a spoken answer ends the question: the word with too much else.
pub fn not_alone() -> String {
    "a confirmation is yes and the word, with little else".to_owned()
}

/// A spoken question ended by its answer, and why.
pub fn not_confirmed(act: &str, why: &str) -> String {
    format!("That does not confirm {act}: {why}. Nothing ran; ask again for a new word.")
}

/// A yes or a no with no question pending.
pub fn nothing_to_confirm() -> String {
    "There is nothing to confirm.".to_owned()
}

/// A yes after the question expired.
pub fn too_late(act: &str) -> String {
    format!("Too late: the request to run {act} expired. Ask again.")
}

/// A no to a question.
pub fn cancelled(act: &str) -> String {
    format!("Cancelled: {act} was not run.")
}

// --- Voice ---------------------------------------------------------------------------------

/// An argument longer than a voice reads.
pub fn too_long(name: &str, chars: usize, max: usize) -> String {
    format!("{name} is {chars} characters long, more than a voice reads ({max})")
}

/// Arguments longer together than a voice reads.
pub fn too_much(chars: usize, max: usize) -> String {
    format!("its arguments are {chars} characters long, more than a voice reads ({max})")
}

/// An argument that is a list or an object.
pub fn nested(name: &str) -> String {
    format!("{name} is a list or an object, which a voice cannot read faithfully")
}

/// An argument with invisible characters.
pub fn invisible_in(name: &str, count: usize) -> String {
    format!("{name} holds {count} invisible characters")
}

/// An argument with a character a voice would not say as written.
pub fn strange(name: &str, code: &str) -> String {
    format!("{name} holds {code}, which a voice would not say as written")
}

/// An argument with a word of Latin and Cyrillic letters.
pub fn mixed(name: &str) -> String {
    format!("{name} mixes Latin and Cyrillic letters in one word")
}

/// Spoken: whose words follow (a server's, or the local command's).
pub fn output_says(server: Option<&str>) -> String {
    match server {
        Some(s) => format!("{s} says:"),
        None => "The command says:".to_owned(),
    }
}

/// Spoken: a server's question follows.
pub fn server_asks(server: &str) -> String {
    format!("{server} asks:")
}

/// Spoken: how many more items a list has.
pub fn and_more(n: usize) -> String {
    format!("; and {n} more")
}

/// Spoken: how many more lines a text has.
pub fn and_more_lines(n: usize) -> String {
    format!("and {n} more lines")
}

/// Spoken: an address, by its host.
pub fn link(host: Option<&str>) -> String {
    match host {
        None => "a link".to_owned(),
        Some(h) => format!("a link to {h}"),
    }
}

// --- Feeds and notes -----------------------------------------------------------------------

/// The digest with no feed configured.
pub fn no_feeds() -> String {
    "You have no feeds yet. Add one with `maven feeds add URL` (a feed's address, or a site's page that links to one).".to_owned()
}

/// The feeds whose polls fail.
pub fn failing(feeds: &str) -> String {
    format!("Failing: {feeds}.")
}

/// The digest with nothing new.
pub fn nothing_new() -> String {
    "Nothing new in your feeds since you last asked.".to_owned()
}

/// A feed's heading in the digest.
pub fn feed_new(feed: &str, n: usize) -> String {
    format!("{feed} ({n} new):")
}

/// How many more items the digest left out.
pub fn and_n_more(n: usize) -> String {
    format!("…and {n} more.")
}

/// A notes search that found nothing.
pub fn no_notes(q: &str) -> String {
    format!("No notes about {q:?}.")
}

// --- Help ----------------------------------------------------------------------------------

/// Help: an act run by its phrase alone.
pub fn say_bare(phrase: &str) -> String {
    format!("say \"{phrase}\"")
}

/// Help: an act that takes the rest of the sentence.
pub fn say_rest(phrase: &str) -> String {
    format!("say \"{phrase} …\" (the rest of the sentence is its argument)")
}

/// Help: an act that needs named arguments.
pub fn needs_named(phrase: &str) -> String {
    format!("\"{phrase}\" needs named arguments, which only a model router (the \"router\" block, kind \"llm\") fills from your own words; or use the service itself")
}

/// Help: an act that takes the rest of the sentence once its server allows it.
pub fn once_allowed(phrase: &str, allow: &str) -> String {
    format!("\"{phrase} …\" takes the rest of the sentence as its argument once its server's allow_tools names it: {allow}")
}

/// Help: an act that asks before it runs.
pub fn asks_first() -> String {
    " (asks first)".to_owned()
}

/// What Maven can do, before the acts.
pub fn help() -> String {
    "I can tell you what's new in your feeds (\"what's new in my feeds?\"), search your notes (\"notes about …\")".to_owned()
}

/// Help with no act enabled.
pub fn no_acts() -> String {
    ". No acts are enabled yet: enable them on the page.".to_owned()
}

/// Help, before the list of acts.
pub fn and_these_acts() -> String {
    ", and run these acts:".to_owned()
}

/// A sentence Maven cannot help with.
pub fn cannot_help() -> String {
    "I can't help with that.".to_owned()
}

/// The act a sentence nearly names.
pub fn did_you_mean(phrase: &str) -> String {
    format!(" Did you mean \"{phrase}\"?")
}

/// What to try instead.
pub fn try_these() -> String {
    " Try \"what's new in my feeds?\", \"notes about …\"".to_owned()
}

/// Before the list of acts, when Maven cannot help.
pub fn or_your_acts() -> String {
    ", or one of your acts:".to_owned()
}

/// A template's phrase for an act.
pub fn or_say(phrase: &str) -> String {
    format!("; or say \"{phrase}\"")
}

/// The model router failed, and the rules router answered.
pub fn router_fell_back(e: &dyn Display) -> String {
    format!("(The model router gave no answer — {e} — so the rules router answered.)")
}

// --- Said in English whatever the turn's language ------------------------------------------

/// An empty turn.
pub fn say_something() -> String {
    "Say something, e.g. \"what can you do?\"".to_owned()
}

/// A turn that failed.
pub fn went_wrong(e: &dyn Display) -> String {
    format!("Something went wrong: {e}")
}

/// An act gone before it ran.
pub fn no_longer_exists(act: &str) -> String {
    format!("{act} no longer exists.")
}

/// An act that did not run, and why.
pub fn did_not_run(act: &str, e: &dyn Display) -> String {
    format!("{act} did not run: {e}")
}

/// An act sent and never answered: it may have run.
pub fn outcome_unknown(act: &str, who: &str, reason: &str) -> String {
    format!("{act}: outcome unknown: {who} may have run it ({reason}). Check with the service itself before asking for it again; Maven does not retry it.")
}

/// The secrets a server asked for, which Maven declined unseen.
pub fn declined_secrets(server: &str, fields: &str) -> String {
    format!("{server} asked for a secret ({fields}); Maven declined it without showing it.")
}

/// Before a server's question, quoted.
pub fn asks_its_words(server: &str, mark: &str) -> String {
    format!("{server} asks; its words, each line marked \"{server}{mark}\":")
}

/// How to answer a server that asks to visit an address.
pub fn visit_how() -> &'static str {
    "It asks you to visit that address (Maven opens nothing). Say yes when done, or no."
}

/// How to answer a server's question with no field.
pub fn go_on_how() -> &'static str {
    "Say yes to go on, or no to decline."
}

/// How to answer a server's question of one field.
pub fn one_field_how() -> &'static str {
    "Answer with the value of that field, or no to decline."
}

/// How to answer a server's question of several fields.
pub fn fields_how() -> &'static str {
    "Answer as `name: value; name: value` with the field names above, or no to decline."
}

/// How to decline a server's question.
pub fn decline_how() -> &'static str {
    "Say no to decline."
}

/// A required field of a server's question.
pub fn required() -> &'static str {
    ", required"
}

/// The choices of a field of a server's question.
pub fn one_of(choices: &str) -> String {
    format!(", one of {choices}")
}

/// An answer to a server's question after it expired.
pub fn asked_too_long_ago(server: &str, act: &str) -> String {
    format!(
        "Too late: {server} asked more than two minutes ago; {act} was not finished. Ask again."
    )
}

/// An answer that does not fit a server's question.
pub fn does_not_answer(reason: &str) -> String {
    format!("That does not answer it: {reason}.")
}

// --- `maven say --explain` -----------------------------------------------------------------

/// `--explain` when the acts cannot be read.
pub fn acts_unreadable(e: &dyn Display) -> String {
    format!("the acts cannot be read: {e}")
}

/// Whose template: the owner's, or the phrasebook's.
pub fn whose(owner: bool) -> &'static str {
    if owner {
        "your"
    } else {
        "the phrasebook's"
    }
}

/// `--explain`: the template that routes the sentence.
pub fn template_matched(whose: &str, text: &str, at: &str, act: &str, args: &str) -> String {
    format!("{whose} template \"{text}\" ({at}) matched: {act} with {args}")
}

/// `--explain`: no template matched.
pub fn no_template() -> String {
    "no sentence template matched; the rules router decided".to_owned()
}

/// `--explain`: a template whose intent names no act.
pub fn names_no_act(intent: &str) -> String {
    format!("its intent {intent} names no act")
}

/// `--explain`: a template slot the act's schema lacks.
pub fn slot_not_in_schema(slot: &str, act: &str) -> String {
    format!("its slot {slot} is not a property of {act}'s input schema")
}

/// `--explain`: a template that matched and was not used.
pub fn not_used() -> String {
    "it was not used".to_owned()
}

/// `--explain`: no server of the phrasebook's name.
pub fn no_server_is(server: &str) -> String {
    format!("no configured server says it is {server} (its serverInfo.name)")
}

/// `--explain`: a phrasebook tool with no act.
pub fn no_act_for_tool(servers: &str, tool: &str) -> String {
    format!("the server {servers} has no act for its tool {tool} (is it offered and listed?)")
}

/// `--explain`: a phrasebook intent naming no server.
pub fn names_no_server() -> String {
    "its intent names no server".to_owned()
}

/// `--explain`: a template that matched, and why it did not route.
pub fn matched_but(whose: &str, text: &str, at: &str, intent: &str, why: &str) -> String {
    format!(
        "{whose} template \"{text}\" ({at}) matched {intent}, but {why}; the rules router decided"
    )
}
