//! E-mail of invitations (PORTAL.md, Security) through `SCEAU_SMTP_URL`, with lettre. The link
//! goes only to the invited address; nothing of it is logged.

use crate::config::Config;
use crate::membership::Invited;
use lettre::message::header::ContentType;
use lettre::message::Mailbox;
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};

/// Sends the portal's e-mails.
#[derive(Clone)]
pub struct Mailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
}

#[derive(Debug, thiserror::Error)]
pub enum MailError {
    #[error("SCEAU_SMTP_URL: {0}")]
    Url(String),
    #[error("SCEAU_SMTP_FROM is not a valid address: {0}")]
    From(String),
    #[error("the invitation could not be written: {0}")]
    Message(String),
    #[error("the SMTP server refused or failed: {0}")]
    Send(String),
}

impl Mailer {
    /// The mailer the configuration asks for; `None` without `SCEAU_SMTP_URL`.
    pub fn from_config(config: &Config) -> Result<Option<Mailer>, MailError> {
        let Some(url) = &config.smtp_url else { return Ok(None) };
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(url.expose())
            .map_err(|e| MailError::Url(e.to_string()))?
            .timeout(Some(std::time::Duration::from_secs(10)))
            .build();
        let from = config
            .smtp_from
            .parse()
            .map_err(|e: lettre::address::AddressError| MailError::From(e.to_string()))?;
        Ok(Some(Mailer { transport, from }))
    }

    /// E-mails the invitation link to the invited member, in French then English.
    pub async fn send_invitation(&self, invited: &Invited, company: &str) -> Result<(), MailError> {
        let to: Mailbox = invited
            .member
            .email
            .as_str()
            .parse()
            .map_err(|e: lettre::address::AddressError| MailError::Message(e.to_string()))?;
        let expires = invited.expires_at.format("%d/%m/%Y %H:%M UTC");
        let body = format!(
            "Bonjour,\n\nVous êtes invité(e) à rejoindre l’espace client Sceau de {company}.\n\
             Choisissez votre mot de passe avec ce lien, valable une seule fois jusqu’au {expires} :\n\n{url}\n\n\
             —\n\nHello,\n\nYou are invited to join {company}'s Sceau client portal.\n\
             Choose your password with this link, valid once until {expires}:\n\n{url}\n",
            url = invited.url
        );
        let message = Message::builder()
            .from(self.from.clone())
            .to(to)
            .subject(format!("Invitation à l’espace client Sceau — {company}"))
            .header(ContentType::TEXT_PLAIN)
            .body(body)
            .map_err(|e| MailError::Message(e.to_string()))?;
        self.transport.send(message).await.map_err(|e| MailError::Send(e.to_string()))?;
        Ok(())
    }
}
