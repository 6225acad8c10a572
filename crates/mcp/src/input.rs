//! Multi round-trip requests (modern era): a `tools/call` answered with `resultType:
//! "input_required"` carries input requests (elicitation, sampling, roots) and an opaque
//! `requestState`; the call is retried with a new id, the answers in `inputResponses` and the
//! state echoed byte for byte. This module reads such a result into [`InputNeeded`] (bounded,
//! every string capped) and holds what Maven answers by itself: sampling is declined (Maven
//! does not lend its model to servers; the request is left unanswered), roots get an empty
//! list. Elicitations are the owner's: [`Ask`] says what the server asks, marked as the
//! server's words, and turns the owner's reply into the answer.

use serde_json::{json, Map, Value};

use crate::secret_words::asks_secret;
use crate::text::{cap_chars, visible, visible_url};

/// Most input requests one round may carry.
pub(crate) const MAX_INPUT_REQUESTS: usize = 16;
/// Largest `requestState` echoed (bytes).
pub(crate) const REQUEST_STATE_CAP: usize = 64 * 1024;
/// Most rounds of one call.
pub(crate) const MAX_ROUNDS: u32 = 8;
/// Longest message or field title kept from an elicitation (characters).
const TEXT_CAP: usize = 500;
/// Longest URL kept from a URL-mode elicitation (characters).
const URL_CAP: usize = 2000;
/// Most fields of one form.
const FIELDS_CAP: usize = 16;
/// Longest input request key (bytes).
const KEY_CAP: usize = 128;

/// One form field the server asks the owner for. What the owner is shown carries no
/// invisible character (T-6); the server's exact spellings are kept for the answer.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Field {
    /// The property name as shown (capped, invisible characters removed): the name the owner
    /// answers with.
    pub name: String,
    /// Its title or description (capped), or the name, as shown.
    pub title: String,
    /// `"string"`, `"number"`, `"integer"` or `"boolean"` (anything else is a string).
    pub kind: String,
    /// Allowed values, when the schema gives an `enum`, as shown.
    pub choices: Vec<String>,
    /// Whether the form requires it.
    pub required: bool,
    /// The property name exactly as the server wrote it: the key of the answer.
    pub(crate) key: String,
    /// The allowed values exactly as the server wrote them, one for each of `choices`.
    pub(crate) values: Vec<String>,
}

/// What an elicitation asks.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum AskKind {
    /// Form mode: fields to fill.
    Form {
        /// The fields.
        fields: Vec<Field>,
    },
    /// URL mode: a page the owner is asked to visit (shown as text; Maven opens nothing).
    Url {
        /// The URL (capped).
        url: String,
    },
    /// A form asking for a secret (a field's name, title or description, or the message,
    /// matches the word table of `secret_words`, however spelled: password, PIN, token, API
    /// key, пароль, код из СМС…, and their look-alikes): declined without being shown.
    Secret {
        /// The field's name (invisible characters removed).
        field: String,
    },
}

/// One elicitation of the server, for the owner.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Ask {
    /// The server's key for it.
    pub key: String,
    /// The server's message (capped, invisible characters removed): the server's words, never
    /// Maven's.
    pub message: String,
    /// What it asks.
    pub kind: AskKind,
}

/// A call that waits for the owner: the original request, the answers Maven gave by itself,
/// the server's state, and the elicitations.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct InputNeeded {
    /// The tool.
    pub tool: String,
    /// Its arguments, as first sent.
    pub arguments: Map<String, Value>,
    /// What the owner is asked.
    pub asks: Vec<Ask>,
    pub(crate) request_state: Option<String>,
    pub(crate) answers: Map<String, Value>,
    pub(crate) round: u32,
    pub(crate) only_sampling: bool,
    /// A legacy call in flight whose held `elicitation/create` this is.
    pub(crate) held: Option<crate::held::Held>,
}

/// A call's step: finished, or waiting for the owner.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum CallStep {
    /// The result.
    Done(crate::ToolOutcome),
    /// The server asks the owner something; answer with [`crate::Client::resume_call`].
    Input(InputNeeded),
}

impl Ask {
    fn from_params(key: String, params: &Value) -> Result<Ask, String> {
        // What the secret rule reads (`read`) and what the owner is shown (`shown`, within
        // what was read, so the rule has read all that is shown): T-6.
        let read = |t: &str| cap_chars(t, TEXT_CAP * 4).to_owned();
        let shown = |t: &str| cap_chars(&visible(t), TEXT_CAP).to_owned();
        let read_message = read(params.get("message").and_then(Value::as_str).unwrap_or(""));
        let message = shown(&read_message);
        if params.get("mode").and_then(Value::as_str) == Some("url") {
            let url = params
                .get("url")
                .and_then(Value::as_str)
                .ok_or("a URL elicitation without a url")?;
            return Ok(Ask {
                key,
                message,
                kind: AskKind::Url {
                    url: visible_url(cap_chars(url, URL_CAP), URL_CAP),
                },
            });
        }
        let schema = params.get("requestedSchema").unwrap_or(&Value::Null);
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut fields = Vec::new();
        let props = schema.get("properties").and_then(Value::as_object);
        let shown_key = |name: &str| cap_chars(&visible(name), KEY_CAP).to_owned();
        if asks_secret(&read_message) || asks_secret(&message) {
            // The question itself asks for a secret ("Ваш пароль", "the code from SMS"):
            // declined, whatever its fields are called.
            let field = props
                .and_then(|p| p.keys().next())
                .map_or("(its message)", String::as_str);
            return Ok(Ask {
                key,
                message,
                kind: AskKind::Secret {
                    field: shown_key(field),
                },
            });
        }
        if let Some(props) = props {
            for (name, p) in props.iter().take(FIELDS_CAP + 1) {
                if fields.len() == FIELDS_CAP {
                    return Err(format!("a form with more than {FIELDS_CAP} fields"));
                }
                let text = |k: &str| p.get(k).and_then(Value::as_str);
                let shown_name = shown_key(name);
                // The first of title, description and name that shows anything.
                let title = [text("title"), text("description"), Some(name.as_str())]
                    .into_iter()
                    .flatten()
                    .map(|t| shown(&read(t)))
                    .find(|t| !t.is_empty())
                    .unwrap_or_default();
                let format = text("format").unwrap_or("");
                let secret = [Some(name.as_str()), text("title"), text("description")]
                    .into_iter()
                    .flatten()
                    .any(|t| asks_secret(&read(t)))
                    || asks_secret(&shown_name)
                    || asks_secret(&title)
                    || format == "password";
                if secret {
                    return Ok(Ask {
                        key,
                        message,
                        kind: AskKind::Secret { field: shown_name },
                    });
                }
                if shown_name.is_empty() || fields.iter().any(|f: &Field| f.name == shown_name) {
                    // Two names the owner cannot tell apart, or one that shows nothing.
                    return Err(format!(
                        "a form whose field names show alike or show nothing ({:?})",
                        cap_chars(name, KEY_CAP)
                    ));
                }
                let values: Vec<String> = p
                    .get("enum")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(Value::as_str)
                            .take(FIELDS_CAP * 4)
                            .map(str::to_owned)
                            .collect()
                    })
                    .unwrap_or_default();
                let mut choices: Vec<String> = Vec::with_capacity(values.len());
                for v in &values {
                    let c = cap_chars(&visible(v), TEXT_CAP).to_owned();
                    if choices.contains(&c) {
                        return Err(format!(
                            "a form whose choices for {shown_name:?} show alike ({:?})",
                            cap_chars(&c, KEY_CAP)
                        ));
                    }
                    choices.push(c);
                }
                fields.push(Field {
                    required: required.contains(&name.as_str()),
                    key: name.clone(),
                    name: shown_name,
                    title,
                    kind: match p.get("type").and_then(Value::as_str) {
                        Some(t @ ("number" | "integer" | "boolean")) => t.to_owned(),
                        _ => "string".to_owned(),
                    },
                    choices,
                    values,
                });
            }
        }
        Ok(Ask {
            key,
            message,
            kind: AskKind::Form { fields },
        })
    }

    /// The answer that declines this elicitation.
    pub fn decline() -> Value {
        json!({"action": "decline"})
    }

    /// The answer of the owner's reply `text`: "no" (or "cancel") declines; a URL elicitation
    /// is accepted by anything else; a form with one field takes the whole text as its value,
    /// a form with several takes `name: value` pairs separated by `;` or new lines. A value
    /// that is not of the field's type, a missing required field or an unknown name is an
    /// error that says which.
    pub fn answer(&self, text: &str) -> Result<Value, AnswerError> {
        let t = text.trim();
        if matches!(t.to_ascii_lowercase().as_str(), "no" | "cancel" | "decline") {
            return Ok(Ask::decline());
        }
        let fields = match &self.kind {
            AskKind::Secret { .. } => return Ok(Ask::decline()),
            AskKind::Url { .. } => return Ok(json!({"action": "accept"})),
            AskKind::Form { fields } => fields,
        };
        let mut content = Map::new();
        if fields.is_empty() {
            // Nothing to fill: anything but "no" goes on.
        } else if fields.len() == 1 {
            let f = &fields[0];
            content.insert(f.key.clone(), typed(f, t)?);
        } else {
            for part in t
                .split([';', '\n'])
                .map(str::trim)
                .filter(|p| !p.is_empty())
            {
                let Some((name, value)) = part.split_once([':', '=']) else {
                    return Err(AnswerError::NotNameValue(part.to_owned()));
                };
                let name = name.trim();
                let Some(f) = fields.iter().find(|f| f.name == name) else {
                    return Err(AnswerError::NoField {
                        name: name.to_owned(),
                        fields: fields.iter().map(|f| f.name.clone()).collect(),
                    });
                };
                content.insert(f.key.clone(), typed(f, value.trim())?);
            }
        }
        if let Some(missing) = fields
            .iter()
            .find(|f| f.required && !content.contains_key(&f.key))
        {
            return Err(AnswerError::Required(missing.name.clone()));
        }
        Ok(json!({"action": "accept", "content": content}))
    }
}

/// Why the owner's reply does not answer a server's question: each case names the field, so a
/// front end can say it in the owner's language. Its `Display` is the English sentence.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnswerError {
    /// A form of several fields answered with a part that is not `name: value`.
    #[error("say each field as `name: value` (got {0:?})")]
    NotNameValue(String),
    /// A name the form does not have.
    #[error("no field {name:?}; the fields are {fields:?}")]
    NoField {
        /// The name said.
        name: String,
        /// The form's fields.
        fields: Vec<String>,
    },
    /// A required field left out.
    #[error("the field {0:?} is required")]
    Required(String),
    /// A value that is none of the field's choices.
    #[error("{name:?} must be one of {choices:?}")]
    NotAChoice {
        /// The field.
        name: String,
        /// Its choices, as the server wrote them.
        choices: Vec<String>,
    },
    /// A value that is not of the field's type.
    #[error("{name:?} {}", .expected.rule())]
    NotOfType {
        /// The field.
        name: String,
        /// The type it takes.
        expected: FieldType,
    },
}

/// A field's type a value may fail to be ([`AnswerError::NotOfType`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldType {
    /// yes or false.
    Boolean,
    /// A whole number.
    Integer,
    /// A number.
    Number,
}

impl FieldType {
    /// What a value of this type is, in English.
    fn rule(self) -> &'static str {
        match self {
            FieldType::Boolean => "is yes or false",
            FieldType::Integer => "must be a whole number",
            FieldType::Number => "must be a number",
        }
    }
}

/// The value of field `f` said `v` by the owner; a choice is answered as the server wrote it.
fn typed(f: &Field, v: &str) -> Result<Value, AnswerError> {
    let v = if f.choices.is_empty() {
        v
    } else {
        match f.choices.iter().position(|c| c == v) {
            Some(i) => f.values.get(i).map_or(v, String::as_str),
            None => {
                return Err(AnswerError::NotAChoice {
                    name: f.name.clone(),
                    choices: f.choices.clone(),
                })
            }
        }
    };
    let not = |expected| AnswerError::NotOfType {
        name: f.name.clone(),
        expected,
    };
    match f.kind.as_str() {
        "boolean" => match v.to_ascii_lowercase().as_str() {
            "yes" | "true" | "y" => Ok(Value::Bool(true)),
            "false" | "n" => Ok(Value::Bool(false)),
            _ => Err(not(FieldType::Boolean)),
        },
        "integer" => v
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| not(FieldType::Integer)),
        "number" => v
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number)
            .ok_or_else(|| not(FieldType::Number)),
        _ => Ok(Value::String(v.to_owned())),
    }
}

/// How Maven answers one input request by itself.
enum Own {
    /// Answered with this value.
    Answer(Value),
    /// Left unanswered (sampling: declined).
    Decline,
    /// The owner's.
    Owner(Ask),
}

fn own_answer(key: &str, req: &Value) -> Result<Own, String> {
    let method = req.get("method").and_then(Value::as_str).unwrap_or("");
    let params = req.get("params").unwrap_or(&Value::Null);
    match method {
        "roots/list" => Ok(Own::Answer(json!({"roots": []}))),
        "sampling/createMessage" => Ok(Own::Decline),
        "elicitation/create" => Ask::from_params(key.to_owned(), params).map(Own::Owner),
        other => Err(format!(
            "an input request of an unknown kind ({:?})",
            cap_chars(other, 64)
        )),
    }
}

/// Reads an `input_required` result of round `round` (the first is 1) of `tool`.
pub(crate) fn read(
    tool: &str,
    arguments: &Map<String, Value>,
    result: &Map<String, Value>,
    round: u32,
    previous_only_sampling: bool,
) -> Result<InputNeeded, String> {
    let request_state = match result.get("requestState") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s.len() <= REQUEST_STATE_CAP => Some(s.clone()),
        Some(Value::String(s)) => {
            return Err(format!(
                "its requestState is {} bytes, more than the {REQUEST_STATE_CAP} Maven echoes",
                s.len()
            ))
        }
        Some(_) => return Err("its requestState is not a string".to_owned()),
    };
    let requests = match result.get("inputRequests") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(_) => return Err("its inputRequests is not an object".to_owned()),
    };
    if requests.len() > MAX_INPUT_REQUESTS {
        return Err(format!(
            "it asks {} things at once, more than {MAX_INPUT_REQUESTS}",
            requests.len()
        ));
    }
    if requests.is_empty() && request_state.is_none() {
        return Err("input_required with neither inputRequests nor requestState".to_owned());
    }
    let mut answers = Map::new();
    let mut asks = Vec::new();
    let mut sampling = 0;
    for (key, req) in &requests {
        if key.len() > KEY_CAP {
            return Err(format!(
                "an input request key is longer than {KEY_CAP} bytes"
            ));
        }
        match own_answer(key, req)? {
            Own::Answer(v) => {
                answers.insert(key.clone(), v);
            }
            Own::Decline => sampling += 1,
            Own::Owner(a) => asks.push(a),
        }
    }
    let only_sampling = sampling > 0 && sampling == requests.len();
    if only_sampling && previous_only_sampling {
        return Err(
            "it asks again to sample from Maven's model, which Maven does not lend to servers"
                .to_owned(),
        );
    }
    Ok(InputNeeded {
        tool: tool.to_owned(),
        arguments: arguments.clone(),
        asks,
        request_state,
        answers,
        round,
        only_sampling,
        held: None,
    })
}

/// The question of a held legacy `elicitation/create` (its params), round `round` of `tool`.
pub(crate) fn legacy(
    tool: &str,
    arguments: &Map<String, Value>,
    params: &Value,
    round: u32,
    held: crate::held::Held,
) -> Result<InputNeeded, String> {
    let ask = Ask::from_params(LEGACY_KEY.to_owned(), params)?;
    Ok(InputNeeded {
        tool: tool.to_owned(),
        arguments: arguments.clone(),
        asks: vec![ask],
        request_state: None,
        answers: Map::new(),
        round,
        only_sampling: false,
        held: Some(held),
    })
}

/// The key of the one question of a held legacy elicitation.
pub(crate) const LEGACY_KEY: &str = "elicitation";

#[cfg(test)]
mod tests {
    use super::*;

    fn result(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn own_answers_and_owner_asks() {
        let r = result(json!({
            "resultType": "input_required",
            "inputRequests": {
                "r": {"method": "roots/list"},
                "s": {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 5}},
                "e": {"method": "elicitation/create", "params": {"message": "Which project?",
                      "requestedSchema": {"type": "object", "properties": {"project": {"type": "string"}}, "required": ["project"]}}}
            },
            "requestState": "abc"
        }));
        let n = read("t", &Map::new(), &r, 1, false).unwrap();
        assert_eq!(n.answers["r"], json!({"roots": []}));
        assert!(!n.answers.contains_key("s"));
        assert_eq!(n.asks.len(), 1);
        assert_eq!(n.asks[0].message, "Which project?");
        assert_eq!(
            n.asks[0].answer("inbox").unwrap(),
            json!({"action": "accept", "content": {"project": "inbox"}})
        );
        assert_eq!(n.asks[0].answer("no").unwrap(), Ask::decline());
        assert_eq!(n.request_state.as_deref(), Some("abc"));
    }

    #[test]
    fn secrets_are_declined_unseen() {
        for (name, title) in [
            ("password", "x"),
            ("api_key", "x"),
            ("value", "Your GitHub token"),
            // The two a server got through before: a Russian title, a PIN.
            ("parol", "Ваш пароль"),
            ("code", "PIN code"),
            ("value", "Код из СМС"),
        ] {
            let p = json!({"message": "m", "requestedSchema": {"type": "object",
                "properties": {name: {"type": "string", "title": title}}}});
            let a = Ask::from_params("k".into(), &p).unwrap();
            assert!(matches!(a.kind, AskKind::Secret { .. }), "{name} {title}");
            assert_eq!(a.answer("hunter2").unwrap(), Ask::decline());
        }
    }

    #[test]
    fn the_rule_reads_descriptions_and_the_message_too() {
        let ask = |message: &str, prop: Value| {
            let p = json!({"message": message, "requestedSchema": {"type": "object",
                "properties": {"value": prop}}});
            Ask::from_params("k".into(), &p).unwrap().kind
        };
        let secret = |k: &AskKind| matches!(k, AskKind::Secret { .. });
        assert!(secret(&ask(
            "m",
            json!({"type": "string", "title": "Value", "description": "the one-time code"})
        )));
        assert!(secret(&ask("Ваш пароль", json!({"type": "string"}))));
        assert!(secret(&ask(
            "Enter the code from your authenticator",
            json!({"type": "string"})
        )));
        assert!(!secret(&ask("Pin the version?", json!({"type": "string"}))));
        assert!(!secret(&ask(
            "Start a code review?",
            json!({"type": "string", "title": "Reviewer"})
        )));
    }

    fn form(message: &str, name: &str, title: &str) -> Value {
        json!({"message": message, "requestedSchema": {"type": "object",
            "properties": {name: {"type": "string", "title": title}}, "required": [name]}})
    }

    #[test]
    fn lookalike_secrets_are_declined_unseen() {
        for (name, title, message) in [
            ("value", "pass\u{200b}word", "m"),         // a zero-width space
            ("value", "Pass\u{ad}word", "m"),           // a soft hyphen
            ("value", "\u{440}\u{430}ssword", "m"),     // Cyrillic р, а
            ("value", "\u{ff30}\u{ff29}\u{ff2e}", "m"), // fullwidth ＰＩＮ
            ("value", "p\u{2060}assword", "m"),         // a word joiner
            ("value", "\u{3c1}\u{3b1}ssword", "m"),     // Greek ρ, α
            (
                "value",
                "\u{1d429}\u{1d41a}\u{1d42c}\u{1d42c}\u{1d430}\u{1d428}\u{1d42b}\u{1d41d}",
                "m",
            ),
            ("value", "pa\u{301}ss\u{332}word", "m"), // combining marks
            ("value", "\u{422}\u{41e}\u{41a}\u{415}N", "m"), // Cyrillic ТОКЕ
            ("pass\u{200b}word", "Value", "m"),       // in the name
            ("value", "Value", "Your \u{440}\u{430}ssword"), // in the message
            ("value", "Value", "\u{ff30}\u{ff29}\u{ff2e} for the card"),
        ] {
            let a = Ask::from_params("k".into(), &form(message, name, title)).unwrap();
            let AskKind::Secret { field } = &a.kind else {
                panic!("{name:?} {title:?} {message:?} was shown: {:?}", a.kind);
            };
            assert!(!field.contains('\u{200b}'), "{field:?}");
            assert_eq!(a.answer("hunter2").unwrap(), Ask::decline());
        }
        // A description the title hides is read too.
        let p = json!({"message": "m", "requestedSchema": {"type": "object", "properties":
            {"v": {"type": "string", "title": "Value", "description": "your pass\u{ad}word"}}}});
        let a = Ask::from_params("k".into(), &p).unwrap();
        assert_eq!(a.kind, AskKind::Secret { field: "v".into() });
    }

    #[test]
    fn near_misses_are_shown_without_invisible_characters() {
        for (message, title) in [
            ("Which passage?", "passage"),
            ("m", "compass word game"),
            ("Pin the tab?", "pin the tab"),
            ("Какой проект выбрать?", "Название задачи"),
            ("Пароход или поезд?", "Способ"),
            ("Your favourite? 🎉", "Title 🔑 with emoji 👍🏽"),
        ] {
            let a = Ask::from_params("k".into(), &form(message, "value", title)).unwrap();
            let AskKind::Form { fields } = &a.kind else {
                panic!("{title:?} was declined: {:?}", a.kind);
            };
            assert_eq!(a.message, message);
            assert_eq!(fields[0].title, title);
        }
        // The invisible characters of a shown question are removed; the answer goes back
        // under the server's own name for the field, and with its own spelling of a choice.
        let p = json!({"message": "Which\u{200b} pro\u{ad}ject?\u{feff}",
            "requestedSchema": {"type": "object", "properties": {
                "pro\u{200b}ject": {"type": "string", "title": "Pro\u{2060}ject\u{e0041}"},
                "col\u{ad}our": {"type": "string", "enum": ["r\u{200b}ed", "blue"]}},
            "required": ["pro\u{200b}ject"]}});
        let a = Ask::from_params("k".into(), &p).unwrap();
        assert_eq!(a.message, "Which project?");
        let AskKind::Form { fields } = &a.kind else {
            panic!("{:?}", a.kind);
        };
        assert_eq!(fields[0].name, "project");
        assert_eq!(fields[0].title, "Project");
        assert_eq!(fields[1].name, "colour");
        assert_eq!(fields[1].title, "colour");
        assert_eq!(fields[1].choices, ["red", "blue"]);
        assert_eq!(
            a.answer("project: inbox; colour: red").unwrap(),
            json!({"action": "accept", "content":
                {"pro\u{200b}ject": "inbox", "col\u{ad}our": "r\u{200b}ed"}})
        );
        // A bidirectional control stays, for the renderers to show as an escape.
        let a = Ask::from_params("k".into(), &form("a\u{202e}b", "v", "t")).unwrap();
        assert_eq!(a.message, "a\u{202e}b");
        // A URL shows its invisible characters encoded.
        let u = json!({"mode": "url", "message": "Open\u{200b} it", "url": "https://exa\u{200b}mple.org/"});
        let a = Ask::from_params("k".into(), &u).unwrap();
        assert_eq!(a.message, "Open it");
        assert_eq!(
            a.kind,
            AskKind::Url {
                url: "https://exa%E2%80%8Bmple.org/".into()
            }
        );
    }

    #[test]
    fn names_or_choices_that_show_alike_are_refused() {
        let p = json!({"message": "m", "requestedSchema": {"type": "object", "properties": {
            "project": {"type": "string"}, "pro\u{200b}ject": {"type": "string"}}}});
        let e = Ask::from_params("k".into(), &p).unwrap_err();
        assert!(e.contains("show alike"), "{e}");
        let p = json!({"message": "m", "requestedSchema": {"type": "object", "properties": {
            "\u{200b}": {"type": "string"}}}});
        let e = Ask::from_params("k".into(), &p).unwrap_err();
        assert!(e.contains("show nothing"), "{e}");
        let p = json!({"message": "m", "requestedSchema": {"type": "object", "properties": {
            "c": {"type": "string", "enum": ["yes", "y\u{200b}es"]}}}});
        let e = Ask::from_params("k".into(), &p).unwrap_err();
        assert!(e.contains("choices"), "{e}");
    }

    #[test]
    fn typed_forms() {
        let p = json!({"message": "m", "requestedSchema": {"type": "object", "properties": {
            "n": {"type": "integer"}, "ok": {"type": "boolean"}, "c": {"type": "string", "enum": ["a", "b"]}},
            "required": ["n"]}});
        let a = Ask::from_params("k".into(), &p).unwrap();
        assert_eq!(
            a.answer("n: 3; ok: yes; c: b").unwrap(),
            json!({"action": "accept", "content": {"n": 3, "ok": true, "c": "b"}})
        );
        assert_eq!(
            a.answer("ok: yes").unwrap_err(),
            AnswerError::Required("n".into())
        );
        let e = a.answer("n: x").unwrap_err();
        assert_eq!(
            e,
            AnswerError::NotOfType {
                name: "n".into(),
                expected: FieldType::Integer
            }
        );
        assert_eq!(e.to_string(), "\"n\" must be a whole number");
        let e = a.answer("n: 1; c: z").unwrap_err();
        assert_eq!(
            e,
            AnswerError::NotAChoice {
                name: "c".into(),
                choices: vec!["a".into(), "b".into()]
            }
        );
        assert_eq!(e.to_string(), "\"c\" must be one of [\"a\", \"b\"]");
        let e = a.answer("m: 1").unwrap_err();
        assert!(matches!(&e, AnswerError::NoField { name, .. } if name == "m"));
        assert_eq!(
            e.to_string(),
            "no field \"m\"; the fields are [\"n\", \"ok\", \"c\"]"
        );
        assert_eq!(
            a.answer("n 1").unwrap_err(),
            AnswerError::NotNameValue("n 1".into())
        );
    }

    #[test]
    fn bounds() {
        let big = "x".repeat(REQUEST_STATE_CAP + 1);
        let e = read(
            "t",
            &Map::new(),
            &result(json!({"requestState": big})),
            1,
            false,
        )
        .unwrap_err();
        assert!(e.contains("requestState"), "{e}");
        let many: Map<String, Value> = (0..=MAX_INPUT_REQUESTS)
            .map(|i| (format!("k{i}"), json!({"method": "roots/list"})))
            .collect();
        let e = read(
            "t",
            &Map::new(),
            &result(json!({"inputRequests": many})),
            1,
            false,
        )
        .unwrap_err();
        assert!(e.contains("at once"), "{e}");
        let e = read("t", &Map::new(), &result(json!({})), 1, false).unwrap_err();
        assert!(e.contains("neither"), "{e}");
        let s = result(json!({"inputRequests": {"s": {"method": "sampling/createMessage"}}}));
        assert!(read("t", &Map::new(), &s, 1, false).is_ok());
        assert!(read("t", &Map::new(), &s, 2, true)
            .unwrap_err()
            .contains("sample"));
        let u = result(json!({"inputRequests": {"x": {"method": "tasks/get"}}}));
        assert!(read("t", &Map::new(), &u, 1, false)
            .unwrap_err()
            .contains("unknown kind"));
    }
}
