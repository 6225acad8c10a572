//! The Streamable HTTP transport (M-4), through a webfetch door of its own.

use std::collections::BTreeMap;

use crate::error::Error;
use crate::rpc::Core;
use crate::{ClientOptions, Limits};

/// The client's side of one Streamable HTTP session.
pub(crate) struct HttpLink {}

impl HttpLink {
    pub(crate) fn new(
        _url: &str,
        _headers: &BTreeMap<String, String>,
        _door: &webfetch::DoorConfig,
        _limits: &Limits,
    ) -> Result<HttpLink, Error> {
        Err(Error::Config(
            "the HTTP transport is not available yet".to_owned(),
        ))
    }

    pub(crate) fn set_protocol_version(&self, _v: &str) {}

    pub(crate) async fn exchange(
        &self,
        _frame: Vec<u8>,
        _method: &str,
        _core: &Core,
        _options: &ClientOptions,
    ) -> Result<(), Error> {
        Err(Error::Config(
            "the HTTP transport is not available yet".to_owned(),
        ))
    }

    pub(crate) async fn post_message(&self, _frame: &[u8], _core: &Core) -> Result<(), Error> {
        Err(Error::Config(
            "the HTTP transport is not available yet".to_owned(),
        ))
    }

    pub(crate) async fn send_notice_briefly(&self, _frame: Vec<u8>, _core: &Core) {}

    pub(crate) async fn close(&self) {}

    pub(crate) fn abandon(&self) {}
}
