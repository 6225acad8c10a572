// An OpenID Certified authorization server for Maven's OAuth tests: panva's oidc-provider
// (testenv/package.json), on 127.0.0.1, with its default settings — DPoP on, refresh tokens
// only for offline_access asked with prompt=consent (OpenID Connect Core §11), rotation of a
// public client's refresh tokens with reuse detection, PKCE, RFC 9207 `iss` — and only what a
// deployment must add itself:
//   - dynamic client registration and token revocation turned on (off by default);
//   - one pre-registered confidential client, `maven-pre` / `maven-pre-secret` (native, so its
//     loopback redirect URI takes any port, RFC 8252 §7.3);
//   - the client_credentials grant turned on (off by default), with two clients of a
//     machine: `maven-m2m` / `maven-m2m-secret` (client_secret_basic) and, when argv[4] is a
//     public JWK (ES256), `maven-m2m-jwt` authenticating with private_key_jwt by that key;
//   - resource indicators: every loopback resource is a resource server taking JWT access
//     tokens with the scope `mcp` (the default throws `invalid_target` for any resource);
//   - the owner's interaction (login, consent) answered at once for the account `owner`
//     (there is no person in a test), as an interaction policy of a deployment would;
//   - access tokens live ACCESS_TTL seconds (argv[2], default 3600).
//
//   node oidc_provider.mjs [PORT] [ACCESS_TTL] [M2M_JWK]
//
// Prints one line on stderr once listening:
//   OIDC_PROVIDER_LISTENING http://127.0.0.1:<port>
import http from 'node:http';
import Provider from 'oidc-provider';

const port = Number(process.argv[2] || 0);
const accessTtl = Number(process.argv[3] || 3600);
const m2mJwk = process.argv[4] ? JSON.parse(process.argv[4]) : null;

const server = http.createServer();
await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;

const loopback = (url) => {
  try {
    const u = new URL(url);
    return u.protocol === 'http:' && u.hostname === '127.0.0.1';
  } catch {
    return false;
  }
};

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: 'maven-pre',
      client_secret: 'maven-pre-secret',
      application_type: 'native',
      redirect_uris: ['http://127.0.0.1/oauth/callback'],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    },
    {
      client_id: 'maven-m2m',
      client_secret: 'maven-m2m-secret',
      redirect_uris: [],
      grant_types: ['client_credentials'],
      response_types: [],
      token_endpoint_auth_method: 'client_secret_basic',
    },
    ...(m2mJwk
      ? [
          {
            client_id: 'maven-m2m-jwt',
            redirect_uris: [],
            grant_types: ['client_credentials'],
            response_types: [],
            token_endpoint_auth_method: 'private_key_jwt',
            token_endpoint_auth_signing_alg: 'ES256',
            jwks: { keys: [m2mJwk] },
          },
        ]
      : []),
  ],
  scopes: ['openid', 'offline_access', 'mcp'],
  features: {
    registration: { enabled: true },
    clientCredentials: { enabled: true },
    revocation: { enabled: true },
    devInteractions: { enabled: false },
    resourceIndicators: {
      enabled: true,
      useGrantedResource: () => true,
      getResourceServerInfo: (_ctx, resource) => {
        if (!loopback(resource)) {
          throw new Provider.errors.InvalidTarget();
        }
        return { scope: 'mcp', audience: resource, accessTokenFormat: 'jwt', accessTokenTTL: accessTtl };
      },
    },
  },
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ sub: id }) }),
});

// The owner's answer to every interaction: logged in as `owner`, everything asked granted.
async function interaction(req, res) {
  const details = await provider.interactionDetails(req, res);
  const { prompt, params, session } = details;
  let result;
  if (prompt.name === 'login') {
    result = { login: { accountId: 'owner' } };
  } else {
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
    const d = prompt.details;
    if (d.missingOIDCScope) grant.addOIDCScope(d.missingOIDCScope.join(' '));
    if (d.missingOIDCClaims) grant.addOIDCClaims(d.missingOIDCClaims);
    for (const [indicator, scopes] of Object.entries(d.missingResourceScopes || {})) {
      grant.addResourceScope(indicator, scopes.join(' '));
    }
    result = { consent: { grantId: await grant.save() } };
  }
  await provider.interactionFinished(req, res, result, { mergeWithLastSubmission: true });
}

const callback = provider.callback();
server.on('request', (req, res) => {
  if (req.url.startsWith('/interaction/')) {
    interaction(req, res).catch((e) => {
      res.statusCode = 500;
      res.end(String(e));
    });
    return;
  }
  callback(req, res);
});
provider.on('server_error', (_ctx, e) => console.error(`oidc-provider server_error: ${e}`));
// What the tests read: one line per event, never a token.
provider.on('grant.success', (ctx) => console.error(`EVENT grant.success ${ctx.oidc.params.grant_type}`));
provider.on('grant.error', (ctx, e) => console.error(`EVENT grant.error ${ctx.oidc.params?.grant_type} ${e.message}`));
provider.on('grant.revoked', () => console.error('EVENT grant.revoked'));
provider.on('registration_create.success', () => console.error('EVENT registration_create.success'));
provider.on('revocation.error', (_ctx, e) => console.error(`EVENT revocation.error ${e.message}`));
provider.on('authorization.success', (ctx) => console.error(`EVENT authorization.success prompt=${ctx.oidc.params.prompt ?? ''} scope=${ctx.oidc.params.scope ?? ''}`));

console.error(`OIDC_PROVIDER_LISTENING ${issuer}`);
