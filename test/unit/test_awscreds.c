/*-------------------------------------------------------------------------
 *
 * test_awscreds.c
 *		Unit tests of the credential sources' formats (src/core/awscreds.c):
 *		profiles of the shared credentials and config files (SSO and
 *		credential_process ones too), STS's XML answers, the container and
 *		instance metadata JSON, a credential_process's output, the SSO
 *		cache's token and the SSO portal's answer, ISO 8601 times, STS form
 *		bodies, the SSO cache's file names and portal URLs, and the
 *		container URLs the SDKs allow.
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>

#include "core/awscreds.h"
#include "unit.h"

/* Resolve a profile that must resolve. */
static bool
resolve_ok(const char *creds, const char *config, const char *profile,
		   AwsProfilePlan *plan)
{
	char		err[SFDW_ERRLEN] = "";
	bool		found;
	bool		ok = awscreds_resolve_profile(creds, config, profile, plan, &found, err,
											  sizeof(err));

	CHECK(ok);
	CHECK(found);
	if (!ok)
		printf("     profile \"%s\": %s\n", profile, err);
	return ok;
}

/* Check that a profile is refused with the given message. */
static void
resolve_fails(const char *creds, const char *config, const char *profile,
			  bool want_found, const char *want)
{
	char		err[SFDW_ERRLEN] = "";
	bool		found = !want_found;
	AwsProfilePlan plan;

	CHECK(!awscreds_resolve_profile(creds, config, profile, &plan, &found, err,
									sizeof(err)));
	CHECK(found == want_found);
	CHECK_STR(err, want);
}

static const char credentials_file[] =
"# a comment\n"
"[default]\n"
"aws_access_key_id = AKIDDEFAULT\n"
"aws_secret_access_key=SECRETDEFAULT  \r\n"
"\n"
"[dev]\n"
"aws_access_key_id = AKIDDEV\n"
"aws_secret_access_key = SECRETDEV\n"
"aws_session_token = TOKENDEV\n"
"[self]\n"
"aws_access_key_id = AKIDSELF\n"
"aws_secret_access_key = SECRETSELF\n"
"role_arn = arn:aws:iam::1:role/self\n"
"source_profile = self\n";

static const char config_file[] =
"[default]\n"
"region = us-west-2\n"
"[profile dev]\n"
"aws_access_key_id = AKIDIGNORED\n"
"s3 =\n"
"  max_concurrent_requests = 20\n"
"[profile cross]\n"
"role_arn = arn:aws:iam::123456789012:role/reader\n"
"source_profile = dev\n"
"external_id = ext-1\n"
"role_session_name = reports\n"
"duration_seconds = 1800\n"
"[profile chained]\n"
"role_arn = arn:aws:iam::2:role/second\n"
"source_profile = cross\n"
"[profile web]\n"
"role_arn = arn:aws:iam::3:role/web\n"
"web_identity_token_file = /var/run/token\n"
"[profile ec2]\n"
"role_arn = arn:aws:iam::4:role/ec2\n"
"credential_source = Ec2InstanceMetadata\n"
"[sso-session corp]\n"
"sso_region = us-east-1\n"
"sso_start_url = https://corp.awsapps.com/start\n"
"sso_registration_scopes = sso:account:access\n"
"[profile sso]\n"
"sso_session = corp\n"
"sso_account_id = 111122223333\n"
"sso_role_name = Reader\n"
"region = eu-west-1\n"
"[profile legacy]\n"
"sso_start_url = https://my-sso-portal.awsapps.com/start\n"
"sso_region = us-west-2\n"
"sso_account_id = 444455556666\n"
"sso_role_name = Writer\n"
"[profile ssorole]\n"
"role_arn = arn:aws:iam::7:role/after-sso\n"
"source_profile = sso\n"
"[profile process]\n"
"credential_process = /opt/bin/creds --user \"helen smith\"\n"
"[profile keysfirst]\n"
"aws_access_key_id = AKIDFIRST\n"
"aws_secret_access_key = SECRETFIRST\n"
"credential_process = /opt/bin/unused\n"
"sso_session = corp\n"
"[profile ssofirst]\n"
"sso_session = corp\n"
"sso_account_id = 1\n"
"sso_role_name = R\n"
"credential_process = /opt/bin/unused\n"
"[profile nosession]\n"
"sso_session = elsewhere\n"
"[profile ssoconflict]\n"
"sso_session = corp\n"
"sso_region = eu-central-1\n"
"[profile ssonorole]\n"
"sso_session = corp\n"
"sso_account_id = 1\n"
"[profile legacynoregion]\n"
"sso_start_url = https://x/start\n"
"sso_account_id = 1\n"
"sso_role_name = R\n"
"[sso-session noregion]\n"
"sso_start_url = https://y/start\n"
"[profile sessionnoregion]\n"
"sso_session = noregion\n"
"sso_account_id = 1\n"
"sso_role_name = R\n"
"[profile regiononly]\n"
"region = us-east-1\n"
"output = json\n"
"[profile fromempty]\n"
"role_arn = arn:aws:iam::8:role/x\n"
"source_profile = regiononly\n"
"[profile webnorole]\n"
"web_identity_token_file = /var/run/token\n"
"[profile loop1]\n"
"role_arn = arn:aws:iam::5:role/a\n"
"source_profile = loop2\n"
"[profile loop2]\n"
"role_arn = arn:aws:iam::5:role/b\n"
"source_profile = loop1\n"
"[profile half]\n"
"aws_access_key_id = AKIDHALF\n"
"[profile nosource]\n"
"role_arn = arn:aws:iam::6:role/x\n"
"[profile badsource]\n"
"role_arn = arn:aws:iam::6:role/x\n"
"credential_source = Somewhere\n"
"[profile badduration]\n"
"role_arn = arn:aws:iam::6:role/x\n"
"source_profile = dev\n"
"duration_seconds = 60\n"
"[profile empty]\n";

/* Profiles: keys, precedence, roles, chains, and every refusal. */
static void
test_profiles(void)
{
	AwsProfilePlan plan;

	if (resolve_ok(credentials_file, config_file, "default", &plan))
	{
		CHECK(plan.source == AWS_SOURCE_STATIC);
		CHECK_STR(plan.creds.access_key_id, "AKIDDEFAULT");
		CHECK_STR(plan.creds.secret_access_key, "SECRETDEFAULT");
		CHECK(plan.creds.session_token == NULL);
		CHECK(plan.nroles == 0);
		awscreds_free_plan(&plan);
	}
	/* the credentials file wins over the config file */
	if (resolve_ok(credentials_file, config_file, "dev", &plan))
	{
		CHECK_STR(plan.creds.access_key_id, "AKIDDEV");
		CHECK_STR(plan.creds.session_token, "TOKENDEV");
		awscreds_free_plan(&plan);
	}
	if (resolve_ok(credentials_file, config_file, "cross", &plan))
	{
		CHECK(plan.source == AWS_SOURCE_STATIC);
		CHECK_STR(plan.creds.access_key_id, "AKIDDEV");
		CHECK(plan.nroles == 1);
		CHECK_STR(plan.roles[0].role_arn, "arn:aws:iam::123456789012:role/reader");
		CHECK_STR(plan.roles[0].external_id, "ext-1");
		CHECK_STR(plan.roles[0].session_name, "reports");
		CHECK(plan.roles[0].duration_s == 1800);
		awscreds_free_plan(&plan);
	}
	if (resolve_ok(credentials_file, config_file, "chained", &plan))
	{
		CHECK(plan.nroles == 2);
		CHECK_STR(plan.roles[0].role_arn, "arn:aws:iam::123456789012:role/reader");
		CHECK_STR(plan.roles[1].role_arn, "arn:aws:iam::2:role/second");
		CHECK(plan.roles[1].external_id == NULL);
		awscreds_free_plan(&plan);
	}
	if (resolve_ok(credentials_file, config_file, "self", &plan))
	{
		CHECK_STR(plan.creds.access_key_id, "AKIDSELF");
		CHECK(plan.nroles == 1);
		CHECK_STR(plan.roles[0].role_arn, "arn:aws:iam::1:role/self");
		awscreds_free_plan(&plan);
	}
	if (resolve_ok(NULL, config_file, "web", &plan))
	{
		CHECK(plan.source == AWS_SOURCE_WEB_IDENTITY);
		CHECK_STR(plan.web_identity_token_file, "/var/run/token");
		CHECK_STR(plan.web_role.role_arn, "arn:aws:iam::3:role/web");
		CHECK(plan.nroles == 0);
		awscreds_free_plan(&plan);
	}
	if (resolve_ok(NULL, config_file, "ec2", &plan))
	{
		CHECK(plan.source == AWS_SOURCE_INSTANCE);
		CHECK(plan.nroles == 1);
		awscreds_free_plan(&plan);
	}
	/* SSO: the session's settings filled in; legacy keys keyed by the URL */
	if (resolve_ok(NULL, config_file, "sso", &plan))
	{
		CHECK(plan.source == AWS_SOURCE_SSO);
		CHECK_STR(plan.sso.session, "corp");
		CHECK_STR(plan.sso.start_url, "https://corp.awsapps.com/start");
		CHECK_STR(plan.sso.region, "us-east-1");
		CHECK_STR(plan.sso.account_id, "111122223333");
		CHECK_STR(plan.sso.role_name, "Reader");
		CHECK_STR(plan.sso.cache_key, "corp");
		CHECK(plan.nroles == 0);
		awscreds_free_plan(&plan);
	}
	if (resolve_ok(NULL, config_file, "legacy", &plan))
	{
		CHECK(plan.source == AWS_SOURCE_SSO);
		CHECK(plan.sso.session == NULL);
		CHECK_STR(plan.sso.region, "us-west-2");
		CHECK_STR(plan.sso.cache_key, "https://my-sso-portal.awsapps.com/start");
		awscreds_free_plan(&plan);
	}
	if (resolve_ok(NULL, config_file, "ssorole", &plan))
	{
		CHECK(plan.source == AWS_SOURCE_SSO);
		CHECK_STR(plan.sso.role_name, "Reader");
		CHECK(plan.nroles == 1);
		CHECK_STR(plan.roles[0].role_arn, "arn:aws:iam::7:role/after-sso");
		awscreds_free_plan(&plan);
	}
	if (resolve_ok(NULL, config_file, "process", &plan))
	{
		CHECK(plan.source == AWS_SOURCE_PROCESS);
		CHECK_STR(plan.credential_process, "/opt/bin/creds --user \"helen smith\"");
		awscreds_free_plan(&plan);
	}
	/* keys, then SSO, then credential_process */
	if (resolve_ok(NULL, config_file, "keysfirst", &plan))
	{
		CHECK(plan.source == AWS_SOURCE_STATIC);
		CHECK_STR(plan.creds.access_key_id, "AKIDFIRST");
		awscreds_free_plan(&plan);
	}
	if (resolve_ok(NULL, config_file, "ssofirst", &plan))
	{
		CHECK(plan.source == AWS_SOURCE_SSO);
		CHECK(plan.credential_process == NULL);
		awscreds_free_plan(&plan);
	}
	/* what `aws configure` writes with a region only: no credentials */
	if (resolve_ok(NULL, config_file, "regiononly", &plan))
	{
		CHECK(plan.source == AWS_SOURCE_NONE);
		awscreds_free_plan(&plan);
	}
	if (resolve_ok(NULL, config_file, "empty", &plan))
	{
		CHECK(plan.source == AWS_SOURCE_NONE);
		awscreds_free_plan(&plan);
	}

	resolve_fails(credentials_file, config_file, "nobody", false,
				  "profile \"nobody\" is in neither the shared credentials file nor the config file");
	resolve_fails(NULL, NULL, "default", false,
				  "profile \"default\" is in neither the shared credentials file nor the config file");
	/* [sso-session corp] is no profile */
	resolve_fails(NULL, config_file, "sso-session corp", false,
				  "profile \"sso-session corp\" is in neither the shared credentials file nor the config file");
	resolve_fails(NULL, config_file, "loop1", true,
				  "the source_profile of profile \"loop2\" leads back to profile \"loop1\"");
	resolve_fails(NULL, config_file, "half", true, "profile \"half\" lacks aws_secret_access_key");
	resolve_fails(NULL, config_file, "fromempty", true,
				  "profile \"regiononly\", the source_profile of profile \"fromempty\", holds no credentials");
	resolve_fails(NULL, config_file, "webnorole", true,
				  "profile \"webnorole\" has a web_identity_token_file but no role_arn");
	resolve_fails(NULL, config_file, "nosession", true,
				  "the sso_session \"elsewhere\" of profile \"nosession\" has no [sso-session elsewhere] section in the config file");
	resolve_fails(NULL, config_file, "ssoconflict", true,
				  "the sso_region of profile \"ssoconflict\" differs from that of its sso-session \"corp\"");
	resolve_fails(NULL, config_file, "ssonorole", true,
				  "profile \"ssonorole\" is an SSO profile but lacks sso_role_name");
	resolve_fails(NULL, config_file, "legacynoregion", true,
				  "profile \"legacynoregion\" is an SSO profile but lacks sso_region");
	resolve_fails(NULL, config_file, "sessionnoregion", true,
				  "neither profile \"sessionnoregion\" nor its sso-session \"noregion\" gives sso_region");
	resolve_fails(NULL, config_file, "nosource", true,
				  "profile \"nosource\" has a role_arn but no source_profile, credential_source or web_identity_token_file");
	resolve_fails(NULL, config_file, "badsource", true,
				  "credential_source \"Somewhere\" of profile \"badsource\" is not Environment, EcsContainer or Ec2InstanceMetadata");
	resolve_fails(credentials_file, config_file, "badduration", true,
				  "duration_seconds of profile \"badduration\" must be a whole number of seconds between 900 and 43200");
	resolve_fails("[default]\nnot a setting\n", NULL, "default", true,
				  "line 2 of the shared credentials file is neither a [section] nor a \"key = value\" setting");
	resolve_fails("key = value\n", NULL, "default", true,
				  "line 1 of the shared credentials file sets a value outside any [section]");
	resolve_fails(NULL, "[profile x\n", "x", true,
				  "line 1 of the config file opens a section with \"[\" but does not close it");
}

static const char assume_role_answer[] =
"<AssumeRoleResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">\n"
"  <AssumeRoleResult>\n"
"    <SourceIdentity>Alice</SourceIdentity>\n"
"    <AssumedRoleUser>\n"
"      <Arn>arn:aws:sts::123456789012:assumed-role/demo/TestAR</Arn>\n"
"      <AssumedRoleId>ARO123EXAMPLE123:TestAR</AssumedRoleId>\n"
"    </AssumedRoleUser>\n"
"    <Credentials>\n"
"      <AccessKeyId>ASIAIOSFODNN7EXAMPLE</AccessKeyId>\n"
"      <SecretAccessKey>wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY</SecretAccessKey>\n"
"      <SessionToken>AQoDYXdzEPT//////////wEXAMPLEtc764&amp;+=</SessionToken>\n"
"      <Expiration>2019-11-09T13:34:41Z</Expiration>\n"
"    </Credentials>\n"
"    <PackedPolicySize>6</PackedPolicySize>\n"
"  </AssumeRoleResult>\n"
"  <ResponseMetadata>\n"
"    <RequestId>c6104cbe-af31-11e0-8154-cbc7ccf896c7</RequestId>\n"
"  </ResponseMetadata>\n"
"</AssumeRoleResponse>\n";

static const char web_identity_answer[] =
"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
"<AssumeRoleWithWebIdentityResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">\n"
"  <AssumeRoleWithWebIdentityResult>\n"
"    <SubjectFromWebIdentityToken>amzn1.account.AF6RHO7KZU5XRVQJGXK6HB56KR2A</SubjectFromWebIdentityToken>\n"
"    <Audience>client.5498841531868486423.1548@apps.example.com</Audience>\n"
"    <Credentials>\n"
"      <SessionToken>AQoDYXdzEE0a8ANXXXXXXXXNO1ewxE5TijQyp+IEXAMPLE</SessionToken>\n"
"      <SecretAccessKey>wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY</SecretAccessKey>\n"
"      <Expiration>2014-10-24T23:00:23.123Z</Expiration>\n"
"      <AccessKeyId>ASgeIAIOSFODNN7EXAMPLE</AccessKeyId>\n"
"    </Credentials>\n"
"    <AssumedRoleUser><Arn>arn:aws:sts::123456789012:assumed-role/FederatedWebIdentityRole/app1</Arn>"
"<AssumedRoleId>AROACLKWSDQRAOEXAMPLE:app1</AssumedRoleId></AssumedRoleUser>\n"
"    <PackedPolicySize>123</PackedPolicySize>\n"
"  </AssumeRoleWithWebIdentityResult>\n"
"  <ResponseMetadata><RequestId>ad4156e9-bce1-11e2-82e6-6b6efEXAMPLE</RequestId></ResponseMetadata>\n"
"</AssumeRoleWithWebIdentityResponse>\n";

/* Parse an STS answer; check its outcome, and the code or reason. */
static void
check_sts(const char *body, AwsAnswer want, const char *want_text)
{
	AwsCreds	creds;
	AwsError	error;
	AwsAnswer	got = awscreds_parse_sts(body, strlen(body), &creds, &error);

	CHECK(got == want);
	if (want == AWS_ANSWER_ERROR)
		CHECK_STR(error.code, want_text);
	else if (want == AWS_ANSWER_MALFORMED)
		CHECK_STR(error.message, want_text);
	awscreds_free_creds(&creds);
}

/* STS: both answers, errors, and what is refused. */
static void
test_sts(void)
{
	AwsCreds	creds;
	AwsError	error;

	CHECK(awscreds_parse_sts(assume_role_answer, strlen(assume_role_answer),
							 &creds, &error) == AWS_ANSWER_CREDENTIALS);
	CHECK_STR(creds.access_key_id, "ASIAIOSFODNN7EXAMPLE");
	CHECK_STR(creds.secret_access_key, "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY");
	CHECK_STR(creds.session_token, "AQoDYXdzEPT//////////wEXAMPLEtc764&+=");
	CHECK(creds.expiration == 1573306481);
	awscreds_free_creds(&creds);

	CHECK(awscreds_parse_sts(web_identity_answer, strlen(web_identity_answer),
							 &creds, &error) == AWS_ANSWER_CREDENTIALS);
	CHECK_STR(creds.access_key_id, "ASgeIAIOSFODNN7EXAMPLE");
	CHECK(creds.expiration == 1414191623);
	awscreds_free_creds(&creds);

	check_sts("<ErrorResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">"
			  "<Error><Type>Sender</Type><Code>AccessDenied</Code>"
			  "<Message>User: x is not authorized to perform: sts:AssumeRole</Message></Error>"
			  "<RequestId>1</RequestId></ErrorResponse>", AWS_ANSWER_ERROR, "AccessDenied");
	check_sts("<ErrorResponse><Error><Type>Sender</Type><Code>ExpiredTokenException</Code>"
			  "<Message>Token expired: current date/time 1 must be before the expiration date/time 0</Message>"
			  "</Error><RequestId>1</RequestId></ErrorResponse>",
			  AWS_ANSWER_ERROR, "ExpiredTokenException");
	{
		static const char escaped[] = "<ErrorResponse><Error><Code>AccessDenied</Code>"
			"<Message>not &lt;allowed&gt; &#x263A;</Message></Error></ErrorResponse>";

		CHECK(awscreds_parse_sts(escaped, strlen(escaped), &creds, &error) == AWS_ANSWER_ERROR);
	}
	CHECK_STR(error.message, "not <allowed> \xe2\x98\xba");

	check_sts("", AWS_ANSWER_MALFORMED, "no root element");
	check_sts("<ErrorResponse><Error><Message>x</Message></Error></ErrorResponse>",
			  AWS_ANSWER_MALFORMED, "an ErrorResponse without an Error Code");
	check_sts("<GetCallerIdentityResponse><GetCallerIdentityResult/></GetCallerIdentityResponse>",
			  AWS_ANSWER_MALFORMED, "the root element is <GetCallerIdentityResponse>, not an STS response");
	check_sts("<AssumeRoleResponse><Other/><AssumeRoleResult/></AssumeRoleResponse>",
			  AWS_ANSWER_MALFORMED, "<AssumeRoleResponse> does not begin with its Result");
	check_sts("<AssumeRoleResponse><AssumeRoleResult><Credentials><AccessKeyId>A</AccessKeyId>"
			  "</Credentials></AssumeRoleResult></AssumeRoleResponse>",
			  AWS_ANSWER_MALFORMED, "the credentials lack SecretAccessKey");
	check_sts("<AssumeRoleResponse><AssumeRoleResult><Credentials><AccessKeyId>A</AccessKeyId>"
			  "<SecretAccessKey>S</SecretAccessKey><SessionToken>T&#10;X-Evil: 1</SessionToken>"
			  "<Expiration>2019-11-09T13:34:41Z</Expiration>"
			  "</Credentials></AssumeRoleResult></AssumeRoleResponse>",
			  AWS_ANSWER_MALFORMED, "a credential is empty or holds a blank, a control or a non-ASCII character");
	check_sts("<AssumeRoleResponse><AssumeRoleResult><Credentials><AccessKeyId>A</AccessKeyId>"
			  "<SecretAccessKey>S</SecretAccessKey><SessionToken>T</SessionToken>"
			  "<Expiration>tomorrow</Expiration>"
			  "</Credentials></AssumeRoleResult></AssumeRoleResponse>",
			  AWS_ANSWER_MALFORMED, "the Expiration \"tomorrow\" is not an ISO 8601 UTC time");
	check_sts("<AssumeRoleResponse><AssumeRoleResult></AssumeRoleResponse>",
			  AWS_ANSWER_MALFORMED, "a closing tag that closes no open element at byte 38");
	check_sts("<a></a><b></b>", AWS_ANSWER_MALFORMED, "a second root element at byte 7");
	check_sts("<a>&bogus;</a>", AWS_ANSWER_MALFORMED, "an unknown entity or character reference at byte 4");
	check_sts("<a><b>", AWS_ANSWER_MALFORMED, "the document ends inside an element");
	check_sts("x<a/>", AWS_ANSWER_MALFORMED, "text outside the root element at byte 0");
	check_sts("<a><!-- x", AWS_ANSWER_MALFORMED, "a comment that does not end");
	check_sts("<a><b><c><d><e><f><g><h><i><j><k><l><m><n><o><p><q>", AWS_ANSWER_MALFORMED,
			  "elements nest deeper than 16 levels");
}

/* The container endpoint's and IMDS's JSON. */
static void
test_json(void)
{
	AwsCreds	creds;
	AwsError	error;
	static const char imds[] =
		"{\n  \"Code\" : \"Success\",\n  \"LastUpdated\" : \"2021-08-03T09:18:49Z\",\n"
		"  \"Type\" : \"AWS-HMAC\",\n  \"AccessKeyId\" : \"ASIAIMDS\",\n"
		"  \"SecretAccessKey\" : \"secret/imds+\",\n  \"Token\" : \"tokenimds\",\n"
		"  \"Expiration\" : \"2021-08-03T15:43:07Z\"\n}";
	static const char container[] =
		"{\"AccessKeyId\": \"ASIACONT\", \"SecretAccessKey\": \"s\", \"Token\": \"t\", "
		"\"Expiration\": \"2016-02-25T06:03:31Z\", \"RoleArn\": \"arn:aws:iam::1:role/task\"}";

	CHECK(awscreds_parse_json(imds, strlen(imds), &creds, &error) == AWS_ANSWER_CREDENTIALS);
	CHECK_STR(creds.access_key_id, "ASIAIMDS");
	CHECK_STR(creds.secret_access_key, "secret/imds+");
	CHECK_STR(creds.session_token, "tokenimds");
	CHECK(creds.expiration == 1628005387);
	awscreds_free_creds(&creds);
	CHECK(awscreds_parse_json(container, strlen(container), &creds, &error) == AWS_ANSWER_CREDENTIALS);
	CHECK_STR(creds.access_key_id, "ASIACONT");
	CHECK(creds.expiration == 1456380211);
	awscreds_free_creds(&creds);
	/* a custom endpoint may hand out keys that do not expire */
	CHECK(awscreds_parse_json("{\"AccessKeyId\":\"A\",\"SecretAccessKey\":\"S\"}", strlen("{\"AccessKeyId\":\"A\",\"SecretAccessKey\":\"S\"}"), &creds, &error) == AWS_ANSWER_CREDENTIALS);
	CHECK(creds.session_token == NULL && creds.expiration == 0);
	awscreds_free_creds(&creds);

	CHECK(awscreds_parse_json("{\"Code\":\"AssumeRoleUnauthorizedAccess\",\"Message\":\"no role\"}", strlen("{\"Code\":\"AssumeRoleUnauthorizedAccess\",\"Message\":\"no role\"}"), &creds, &error) == AWS_ANSWER_ERROR);
	CHECK_STR(error.code, "AssumeRoleUnauthorizedAccess");
	CHECK_STR(error.message, "no role");
	CHECK(awscreds_parse_json("{\"code\":\"InvalidToken\",\"message\":\"bad auth\"}", strlen("{\"code\":\"InvalidToken\",\"message\":\"bad auth\"}"), &creds, &error) == AWS_ANSWER_ERROR);
	CHECK_STR(error.code, "InvalidToken");
	CHECK(awscreds_parse_json("[1]", strlen("[1]"), &creds, &error) == AWS_ANSWER_MALFORMED);
	CHECK_STR(error.message, "the answer is not a JSON object");
	CHECK(awscreds_parse_json("{\"AccessKeyId\":1,\"SecretAccessKey\":\"S\"}", strlen("{\"AccessKeyId\":1,\"SecretAccessKey\":\"S\"}"), &creds, &error) == AWS_ANSWER_MALFORMED);
	CHECK_STR(error.message, "a credential member is not a string");
	CHECK(awscreds_parse_json("{\"SecretAccessKey\":\"S\"}", strlen("{\"SecretAccessKey\":\"S\"}"), &creds, &error) == AWS_ANSWER_MALFORMED);
	CHECK_STR(error.message, "the credentials lack AccessKeyId");
	CHECK(awscreds_parse_json("{\"AccessKeyId\":\"A B\",\"SecretAccessKey\":\"S\"}", strlen("{\"AccessKeyId\":\"A B\",\"SecretAccessKey\":\"S\"}"), &creds, &error) == AWS_ANSWER_MALFORMED);
	CHECK(awscreds_parse_json("{", strlen("{"), &creds, &error) == AWS_ANSWER_MALFORMED);
}

/* Parse a credential_process's output that must be refused for want. */
static void
process_fails(const char *out, const char *want)
{
	AwsCreds	creds;
	AwsError	error;

	CHECK(awscreds_parse_process(out, strlen(out), &creds, &error) == AWS_ANSWER_MALFORMED);
	CHECK_STR(error.message, want);
	awscreds_free_creds(&creds);
}

/* Parse an SSO portal answer; check its outcome and the message. */
static void
check_sso_role(const char *body, AwsAnswer want, const char *want_message)
{
	AwsCreds	creds;
	AwsError	error;

	CHECK(awscreds_parse_sso_role(body, strlen(body), &creds, &error) == want);
	CHECK_STR(error.message, want_message);
	awscreds_free_creds(&creds);
}

/* A credential_process's output, the SSO cache's token, the SSO portal. */
static void
test_process_and_sso(void)
{
	AwsCreds	creds;
	AwsError	error;
	char	   *token;
	int64_t		expires = 0;
	char		err[SFDW_ERRLEN];
	static const char temporary[] =
		"{\"Version\": 1, \"AccessKeyId\": \"ASIAPROC\", \"SecretAccessKey\": \"s/p+\", "
		"\"SessionToken\": \"tp\", \"Expiration\": \"2026-11-25T15:00:00Z\"}\n";
	static const char long_term[] =
		"{\"Version\": 1, \"AccessKeyId\": \"AKIAPROC\", \"SecretAccessKey\": \"s\"}";
	static const char cached[] =
		"{\"startUrl\": \"https://corp.awsapps.com/start\", \"region\": \"us-east-1\", "
		"\"accessToken\": \"aoa/tok+en\", \"expiresAt\": \"2026-11-25T15:00:00Z\", "
		"\"clientId\": \"c\", \"clientSecret\": \"cs\", \"refreshToken\": \"r\"}";
	static const char portal[] =
		"{\"roleCredentials\": {\"accessKeyId\": \"ASIASSO\", \"secretAccessKey\": \"s/s\", "
		"\"sessionToken\": \"ts\", \"expiration\": 1795618800000}}";

	CHECK(awscreds_parse_process(temporary, strlen(temporary), &creds, &error) ==
		  AWS_ANSWER_CREDENTIALS);
	CHECK_STR(creds.access_key_id, "ASIAPROC");
	CHECK_STR(creds.secret_access_key, "s/p+");
	CHECK_STR(creds.session_token, "tp");
	CHECK(creds.expiration == 1795618800);
	awscreds_free_creds(&creds);
	/* no Expiration: long-term credentials */
	CHECK(awscreds_parse_process(long_term, strlen(long_term), &creds, &error) ==
		  AWS_ANSWER_CREDENTIALS);
	CHECK(creds.session_token == NULL && creds.expiration == 0);
	awscreds_free_creds(&creds);
	process_fails("{\"AccessKeyId\": \"A\", \"SecretAccessKey\": \"S\"}", "it has no Version");
	process_fails("{\"Version\": 2, \"AccessKeyId\": \"A\", \"SecretAccessKey\": \"S\"}",
				  "its Version is not 1");
	process_fails("{\"Version\": \"1\", \"AccessKeyId\": \"A\", \"SecretAccessKey\": \"S\"}",
				  "its Version is not 1");
	process_fails("{\"Version\": 1, \"AccessKeyId\": \"A\"}", "the credentials lack SecretAccessKey");
	process_fails("{\"Version\": 1, \"AccessKeyId\": \"A\", \"SecretAccessKey\": 5}",
				  "a credential member is not a string");
	process_fails("{\"Version\": 1, \"AccessKeyId\": \"A\", \"SecretAccessKey\": \"S\", "
				  "\"Expiration\": \"soon\"}",
				  "the Expiration \"soon\" is not an ISO 8601 UTC time");
	process_fails("[]", "it is not a JSON object");
	process_fails("Enter MFA code:", "unexpected character at byte 0");

	CHECK(awscreds_parse_sso_token(cached, strlen(cached), &token, &expires, err, sizeof(err)));
	CHECK_STR(token, "aoa/tok+en");
	CHECK(expires == 1795618800);
	sfdw_free(token);
	/* the older AWS CLI wrote "UTC" for "Z" */
	{
		static const char older[] = "{\"accessToken\": \"t\", \"expiresAt\": \"2026-11-25T15:00:00UTC\"}";

		CHECK(awscreds_parse_sso_token(older, strlen(older), &token, &expires, err, sizeof(err)));
		CHECK(expires == 1795618800);
		sfdw_free(token);
	}
	CHECK(!awscreds_parse_sso_token("{\"accessToken\": \"t\"}", 20, &token, &expires, err,
									sizeof(err)));
	CHECK_STR(err, "it lacks the string accessToken or expiresAt");
	CHECK(token == NULL);
	CHECK(!awscreds_parse_sso_token("{\"accessToken\": \"a b\", \"expiresAt\": \"2026-11-25T15:00:00Z\"}",
									strlen("{\"accessToken\": \"a b\", \"expiresAt\": \"2026-11-25T15:00:00Z\"}"),
									&token, &expires, err, sizeof(err)));
	CHECK_STR(err, "its accessToken is empty or holds a blank, a control or a non-ASCII character");

	CHECK(awscreds_parse_sso_role(portal, strlen(portal), &creds, &error) == AWS_ANSWER_CREDENTIALS);
	CHECK_STR(creds.access_key_id, "ASIASSO");
	CHECK_STR(creds.secret_access_key, "s/s");
	CHECK_STR(creds.session_token, "ts");
	CHECK(creds.expiration == 1795618800);
	awscreds_free_creds(&creds);
	check_sso_role("{\"message\": \"Session token not found or invalid\"}", AWS_ANSWER_ERROR,
				   "Session token not found or invalid");
	check_sso_role("{}", AWS_ANSWER_MALFORMED, "it has no roleCredentials object");
	check_sso_role("{\"roleCredentials\": {\"accessKeyId\": \"A\", \"secretAccessKey\": \"S\", "
				   "\"expiration\": 1}}", AWS_ANSWER_MALFORMED, "the credentials lack sessionToken");
	check_sso_role("{\"roleCredentials\": {\"accessKeyId\": \"A\", \"secretAccessKey\": \"S\", "
				   "\"sessionToken\": \"T\", \"expiration\": \"2026-11-25T15:00:00Z\"}}",
				   AWS_ANSWER_MALFORMED,
				   "the credentials lack an expiration in whole milliseconds since 1970");
	check_sso_role("{\"roleCredentials\": {\"accessKeyId\": \"A\", \"secretAccessKey\": \"S\", "
				   "\"sessionToken\": \"T\", \"expiration\": 1.5e12}}", AWS_ANSWER_MALFORMED,
				   "the credentials lack an expiration in whole milliseconds since 1970");
	check_sso_role("{\"roleCredentials\": {\"secretAccessKey\": \"S\", \"sessionToken\": \"T\", "
				   "\"expiration\": 1795618800000}}", AWS_ANSWER_MALFORMED,
				   "the credentials lack AccessKeyId");

	token = awscreds_sso_cache_file("corp");
	CHECK_STR(token, "ee0bfd2552fbd840c02cc48b6e823320543c450f.json");
	sfdw_free(token);
	token = awscreds_sso_cache_file("https://my-sso-portal.awsapps.com/start");
	CHECK_STR(token, "c7aaaf71fcc8777ae2475525ed049d39fe16c484.json");
	sfdw_free(token);
	{
		AwsSso		sso = {NULL, NULL, "us-east-1", "111122223333", "Read Only/x", NULL};

		token = awscreds_sso_url("https://portal.sso.us-east-1.amazonaws.com", &sso);
		CHECK_STR(token, "https://portal.sso.us-east-1.amazonaws.com/federation/credentials"
				  "?role_name=Read%20Only%2Fx&account_id=111122223333");
		sfdw_free(token);
	}
}

/* Times, bodies and container URLs. */
static void
test_misc(void)
{
	int64_t		t = -1;
	AwsRole		role = {"arn:aws:iam::123456789012:role/a b", "ext&id", NULL, 900};
	char	   *body;

	CHECK(awscreds_parse_time("1970-01-01T00:00:00Z", &t) && t == 0);
	CHECK(awscreds_parse_time("2000-02-29T12:00:00+00:00", &t) && t == 951825600);
	CHECK(awscreds_parse_time("2026-11-25T15:00:00.5Z", &t) && t == 1795618800);
	CHECK(!awscreds_parse_time("2026-11-25 15:00:00Z", &t));
	CHECK(!awscreds_parse_time("2026-13-25T15:00:00Z", &t));
	CHECK(!awscreds_parse_time("2026-11-25T15:00:00+01:00", &t));
	CHECK(!awscreds_parse_time("2026-11-25T15:00:00", &t));
	CHECK(!awscreds_parse_time("2026-11-25T15:00:00Zjunk", &t));

	body = awscreds_sts_body(&role, "sess", NULL);
	CHECK_STR(body, "Action=AssumeRole&Version=2011-06-15"
			  "&RoleArn=arn%3Aaws%3Aiam%3A%3A123456789012%3Arole%2Fa%20b"
			  "&RoleSessionName=sess&DurationSeconds=900&ExternalId=ext%26id");
	free(body);
	role.duration_s = 0;
	body = awscreds_sts_body(&role, "s", "tok.en+/=");
	CHECK_STR(body, "Action=AssumeRoleWithWebIdentity&Version=2011-06-15"
			  "&RoleArn=arn%3Aaws%3Aiam%3A%3A123456789012%3Arole%2Fa%20b"
			  "&RoleSessionName=s&WebIdentityToken=tok.en%2B%2F%3D");
	free(body);

	body = awscreds_container_relative_url("/v2/credentials/task-1");
	CHECK_STR(body, "http://169.254.170.2/v2/credentials/task-1");
	free(body);
	body = awscreds_container_relative_url("v2/credentials/task-1");
	CHECK_STR(body, "http://169.254.170.2/v2/credentials/task-1");
	free(body);

	CHECK(awscreds_container_url_ok("https://creds.example.com/v1"));
	CHECK(awscreds_container_url_ok("http://127.0.0.1:8080/creds"));
	CHECK(awscreds_container_url_ok("http://127.1.2.3/creds"));
	CHECK(awscreds_container_url_ok("http://169.254.170.2/v2/credentials/x"));
	CHECK(awscreds_container_url_ok("http://169.254.170.23/v1/credentials"));
	CHECK(awscreds_container_url_ok("http://[fd00:ec2::23]/v1/credentials"));
	CHECK(awscreds_container_url_ok("http://[::1]:99/x"));
	CHECK(awscreds_container_url_ok("http://localhost:99/x"));
	CHECK(!awscreds_container_url_ok("http://10.0.0.1/creds"));
	CHECK(!awscreds_container_url_ok("http://127.0.0.1.evil.com/creds"));
	CHECK(!awscreds_container_url_ok("http://127.0.0.256/creds"));
	CHECK(!awscreds_container_url_ok("http://user@127.0.0.1/creds"));
	CHECK(!awscreds_container_url_ok("ftp://127.0.0.1/creds"));
	CHECK(!awscreds_container_url_ok("https://"));

	CHECK(awscreds_printable("AKID/+="));
	CHECK(!awscreds_printable(""));
	CHECK(!awscreds_printable("a\r\nb"));
	CHECK(!awscreds_printable("caf\xc3\xa9"));
}

void
suite_awscreds(void)
{
	test_profiles();
	test_sts();
	test_json();
	test_process_and_sso();
	test_misc();
}
