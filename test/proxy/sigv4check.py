"""SigV4 checks of the requests the proxy receives.

Every signature is computed again by botocore, so that the extension's own
signer is checked by an independent implementation, and the request is
refused as DynamoDB refuses it (IncompleteSignatureException,
InvalidSignatureException, UnrecognizedClientException,
MissingAuthenticationTokenException) when the Authorization header is
missing or malformed, its access key is not one of the credentials given,
the credential scope, X-Amz-Date or session token do not agree, the signed
x-amz-content-sha256 is not the body's, or the signature differs.  The time of a signature is checked against the clock the
verifier is given (the proxy's, which clock_offset_s may set off): more
than 15 minutes either way is refused.  SignatureVerifier serves one
service ("dynamodb" here; awsendpoints.py checks "sts" with it).
"""

import datetime
import hashlib
import hmac
from dataclasses import dataclass

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.compat import HTTPHeaders
from botocore.credentials import Credentials

from ddbprotocol import CORAL, ProxyError

SIGV4_FORMAT = "%Y%m%dT%H%M%SZ"
MAX_CLOCK_SKEW_S = 15 * 60


class ExactHeadersSigV4(SigV4Auth):
    """SigV4Auth that signs exactly the headers the request carries."""

    def headers_to_sign(self, request):
        return request.headers


@dataclass
class Authorization:
    """The parts of a SigV4 Authorization header."""

    access_key: str
    date: str
    region: str
    service: str
    terminator: str
    signed_headers: list
    signature: str


def parse_authorization(value):
    """Split an Authorization header; raise ProxyError when malformed."""
    scheme, _, rest = value.strip().partition(" ")
    if scheme != "AWS4-HMAC-SHA256":
        raise incomplete("Authorization header must use AWS4-HMAC-SHA256.")
    fields = {}
    for part in rest.split(","):
        name, _, val = part.strip().partition("=")
        fields[name] = val
    for name in ("Credential", "SignedHeaders", "Signature"):
        if not fields.get(name):
            raise incomplete(
                f"Authorization header requires '{name}' parameter.")
    scope = fields["Credential"].split("/")
    if len(scope) != 5:
        raise incomplete("Credential must have the form "
                         "AKID/date/region/service/aws4_request.")
    return Authorization(*scope, fields["SignedHeaders"].split(";"),
                         fields["Signature"])


def incomplete(message):
    """An IncompleteSignatureException."""
    return ProxyError(400, CORAL + "IncompleteSignatureException", message)


def invalid_signature(message):
    """An InvalidSignatureException."""
    return ProxyError(400, CORAL + "InvalidSignatureException", message)


def unrecognized_client():
    """An UnrecognizedClientException."""
    return ProxyError(400, CORAL + "UnrecognizedClientException",
                      "The security token included in the request is invalid.")


class SignatureVerifier:
    """Checks SigV4 signatures against the configured credentials, for
    one service ("dynamodb"; test_credentials.py's STS checks "sts")."""

    def __init__(self, credentials, service="dynamodb", clock=None):
        self.credentials = credentials  # access key -> (secret, token)
        self.service = service
        # the server's time, a naive UTC datetime (the proxy's may be set off)
        self.clock = clock or datetime.datetime.utcnow

    def verify(self, method, path, headers, body):
        """Raise ProxyError unless the request is correctly signed; return
        the access key it was signed with."""
        if headers.get("Authorization") is None:
            raise ProxyError(400, CORAL + "MissingAuthenticationTokenException",
                             "Request is missing Authentication Token")
        auth = parse_authorization(headers["Authorization"])
        secret, token = self.credentials.get(auth.access_key, (None, None))
        if secret is None:
            raise unrecognized_client()
        self.check_scope(auth, headers)
        self.check_token(auth, headers, token)
        self.check_content_hash(auth, headers, body)
        signed = self.signed_request(method, path, headers, body, auth)
        signer = ExactHeadersSigV4(
            Credentials(auth.access_key, secret), auth.service, auth.region)
        canonical = signer.canonical_request(signed)
        string_to_sign = signer.string_to_sign(signed, canonical)
        expected = signer.signature(string_to_sign, signed)
        if not hmac.compare_digest(expected, auth.signature):
            raise invalid_signature(
                "The request signature we calculated does not match the "
                "signature you provided. Check your AWS Secret Access Key and "
                "signing method. Consult the service documentation for "
                "details.\n\nThe Canonical String for this request should "
                f"have been\n'{canonical}'\n\nThe String-to-Sign should have "
                f"been\n'{string_to_sign}'\n")
        return auth.access_key

    def check_scope(self, auth, headers):
        """The credential scope and X-Amz-Date must agree and be current."""
        amz_date = headers.get("X-Amz-Date")
        if amz_date is None:
            raise incomplete("Authorization header requires existence of "
                             "an 'X-Amz-Date' header.")
        for required in ("host", "x-amz-date"):
            if required not in auth.signed_headers:
                raise incomplete(f"'{required}' must be a 'SignedHeader' in "
                                 "the AWS Authorization.")
        if auth.service != self.service or auth.terminator != "aws4_request":
            raise invalid_signature("Credential should be scoped to correct "
                                    f"service: '{self.service}'.")
        if auth.date != amz_date[:8]:
            raise invalid_signature(
                f"Date in Credential scope does not match YYYYMMDD from "
                f"X-Amz-Date: {auth.date} != {amz_date[:8]}.")
        try:
            stamp = datetime.datetime.strptime(amz_date, SIGV4_FORMAT)
        except ValueError:
            raise incomplete(f"X-Amz-Date '{amz_date}' is not of the form "
                             "YYYYMMDD'T'HHMMSS'Z'.") from None
        now = self.clock().replace(microsecond=0)
        window = datetime.timedelta(seconds=MAX_CLOCK_SKEW_S)
        if stamp < now - window:
            raise invalid_signature(
                f"Signature expired: {amz_date} is now earlier than "
                f"{(now - window).strftime(SIGV4_FORMAT)} "
                f"({now.strftime(SIGV4_FORMAT)} - 15 min.)")
        if stamp > now + window:
            raise invalid_signature(
                f"Signature not yet current: {amz_date} is still later than "
                f"{(now + window).strftime(SIGV4_FORMAT)} "
                f"({now.strftime(SIGV4_FORMAT)} + 15 min.)")

    @staticmethod
    def check_token(auth, headers, expected_token):
        """A session token must be signed, and match when one is configured."""
        token = headers.get("X-Amz-Security-Token")
        if token is not None and "x-amz-security-token" not in auth.signed_headers:
            raise invalid_signature(
                "'x-amz-security-token' must be a 'SignedHeader' when present.")
        if expected_token is not None and token != expected_token:
            raise unrecognized_client()

    @staticmethod
    def check_content_hash(auth, headers, body):
        """A signed x-amz-content-sha256 must be the body's hash."""
        claimed = headers.get("X-Amz-Content-SHA256")
        if claimed is None or "x-amz-content-sha256" not in auth.signed_headers:
            return
        if claimed != hashlib.sha256(body).hexdigest():
            raise invalid_signature("The provided 'x-amz-content-sha256' "
                                    "header does not match what was computed.")

    @staticmethod
    def signed_request(method, path, headers, body, auth):
        """The request rebuilt from the signed headers and the body alone."""
        only_signed = HTTPHeaders()
        for name in auth.signed_headers:
            values = headers.get_all(name)
            if values is None:
                raise invalid_signature(
                    f"Signed header '{name}' is missing from the request.")
            for value in values:
                only_signed[name] = value
        request = AWSRequest(method=method,
                             url=f"http://{headers['Host']}{path}", data=body)
        request.headers = only_signed
        request.context["timestamp"] = headers["X-Amz-Date"]
        return request
