"""Mutations of the answers DynamoDB Local gives, for "mutate" faults.

A "mutate" fault (see faultspecs.py) changes a 200 answer of a read (GetItem,
BatchGetItem, Query, Scan); other answers go back unchanged, logged as not
applied.  A value mutation picks one AttributeValue of one item in the
answer at random (seeded) among those it fits (an S value for an S
mutation...), nested M and L members included, key attributes excluded;
when none fits, nothing is changed and the log says "applied": false.
Each mutation belongs to a class:

  shape     a tag with a value of the wrong JSON type: s_not_string {"S":5},
            n_not_string {"N":true}, m_not_object {"M":[]}, l_not_array
            {"L":{}}, bool_not_bool {"BOOL":"yes"}, null_false
            {"NULL":false}, set_not_array {"SS":"a"}, set_member_type
            ({"NS":[1]}, {"SS":["a",5]}), set_empty {"SS":[]}, two_tags
            (a second tag beside the first), no_tag {}
  tag       an unknown tag: tag_unknown "Z", tag_lowercase ("s", "bool"),
            tag_empty ""
  utf8      strings that are not UTF-8: utf8_raw (raw bytes such as 0xFF,
            an overlong or cut sequence, an encoded surrogate) and
            utf8_surrogate (a lone \\ud800 escape), in S values or SS members
  base64    b_bad, bs_bad: B and BS values that are not base64
  number    n_garbage "12abc", n_empty "", n_overflow "1e999", n_40digits
            (40 significant digits), in N values or NS members
  depth     deep_33, deep_500: the value wrapped in 33 or 500 levels of
            {"M": {"__deep__": ...}}, past DynamoDB's 32
  huge      huge_string: an S value with 450,000 "~" appended (past the
            400 KB item limit); huge_number: 5,000 nines
  key       key_missing: a key attribute removed from an item;
            key_malformed: its value made {"S":5} or {}; key_wrong_type:
            the key sent as B (its text in base64)
  response  items_not_array (Items an object or a string), item_not_object
            (one element of Items, or Item, not an object),
            count_not_number (Count a string or null), responses_not_object
            (BatchGetItem's Responses an array), not_object (the body is
            JSON but not an object), error_200 (an error body with status
            200)
  body      truncate_body (the body cut short, Content-Length and
            x-amz-crc32 of the cut body), truncate_stream (full length
            announced, part sent, connection closed), bad_crc
  lek       Query and Scan only.  lek_repeat: the first page gets a
            LastEvaluatedKey (the key of its first item), and a request that
            starts from that key gets the same key back; lek_cycle: the first
            page gets K1 (first item), the request from K1 gets K2 (its
            last item), the request from K2 gets K1 again.  The state is per
            stream of pages (the request without its ExclusiveStartKey);
            give the fault a "count" of a few dozen so that it outlives the
            pages.  lek_malformed: LastEvaluatedKey a string, an array or a
            key of the wrong shape.
  benign    rewrites that do not change the answer: shuffle_members
            (object members in random order at every level, arrays kept),
            whitespace (between every token), unicode_escapes (\\uXXXX and
            \\/ escapes in strings and member names, surrogate pairs for
            characters past U+FFFF), number_spellings (every N value and NS
            member as an equal number: leading zeros, trailing fractional
            zeros, or exponent form such as 4.2E+1)

Each firing is logged; GET /__proxy/mutations reads the log, DELETE
empties it (see proxyfront.py).  A log entry: "mutation", "class",
"action", "table", "select" (the request's Select), "applied" (whether
anything changed), and where: "attribute" (top-level attribute name),
"path" (e.g. "jm.a[2]"), "item_key" (the key attributes of the item, as
AttributeValues, before the change); lek entries add "stream" and
"repeated": true when the served LastEvaluatedKey is one that stream had
already been given.  Stats count applied mutations by name under
"mutations".
"""

import base64
import decimal
import json

from ddbprotocol import DDB

READ_ACTIONS = {"GetItem", "BatchGetItem", "Query", "Scan"}
RAW_MARK = "\x01raw{}\x01"       # stands for raw bytes until encoded()
RAW_VALUE_MARK = "\x01value{}\x01"  # stands for raw JSON text, quotes and all
DEEP_KEY = "__deep__"
HUGE_FILL = "~" * 450000
BAD_UTF8 = [b"\xff", b"\xc0\xaf", b"\xed\xa0\x80", b"\xe2\x82", b"\x80abc"]
BAD_BASE64 = ["!!!!", "QUJ", "Q===", "QU JD", "QUJD*A=="]
SET_TAGS = ("SS", "NS", "BS")


class Mutation:
    """One response being mutated: its document and what was changed."""

    def __init__(self, doc, request, action, rng, streams, key_names,
                 attributes=None):
        self.doc = doc
        self.request = request
        self.action = action
        self.rng = rng
        self.streams = streams      # the fault's lek state, per stream
        self.key_names = key_names  # table (None: the request's) -> names
        self.attributes = attributes  # the only attributes to change, or None
        self.where = {}             # for the log
        self.raw = []               # byte strings behind RAW_MARK
        self.raw_values = []        # JSON texts behind RAW_VALUE_MARK
        self.serialize = lambda doc: json.dumps(doc, ensure_ascii=False)
        self.body = None            # a body replacing the document
        self.status = 200
        self.delivery = "normal"    # or "bad_crc", "truncate_stream"
        self.cut = 0

    def raw_text(self, data):
        """A placeholder that encoded() turns into these raw bytes."""
        self.raw.append(data)
        return RAW_MARK.format(len(self.raw) - 1)

    def raw_value(self, text):
        """A placeholder that encoded() turns into this JSON text, which
        may be nested deeper than json.dumps can go."""
        self.raw_values.append(text.encode())
        return RAW_VALUE_MARK.format(len(self.raw_values) - 1)

    def encoded(self):
        """The response body after the mutation."""
        body = self.body
        if body is None:
            body = self.serialize(self.doc).encode()
        for i, data in enumerate(self.raw_values):
            body = body.replace(json.dumps(RAW_VALUE_MARK.format(i)).encode(), data)
        for i, data in enumerate(self.raw):
            mark = json.dumps(RAW_MARK.format(i))[1:-1].encode()
            body = body.replace(mark, data)
        return body

    def items(self):
        """(table or None, item) for every item of the answer."""
        found = []
        for name in ("Items", "Item"):
            value = self.doc.get(name)
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, dict):
                    found.append((None, item))
        responses = self.doc.get("Responses")
        if isinstance(responses, dict):
            for table, items in responses.items():
                found.extend((table, i) for i in items if isinstance(i, dict))
        return found

    def targets(self, wants, keys=False):
        """(item, table, attribute, container, slot, value, path) of every
        AttributeValue wants() accepts: key attributes when keys, else the
        others and the members of their M and L values."""
        found = []
        for table, item in self.items():
            key_names = self.key_names(table)
            for name, value in item.items():
                if (name in key_names) != keys or (
                        self.attributes is not None and name not in self.attributes):
                    continue
                for container, slot, node, path in av_slots(
                        item, name, value, name, nested=not keys):
                    if wants(node):
                        found.append((item, table, name, container, slot,
                                      node, path))
        return found

    def change_one(self, wants, replace, keys=False):
        """Replace one AttributeValue that wants() accepts by
        replace(value, mutation); False when there is none."""
        found = self.targets(wants, keys)
        if not found:
            return False
        item, table, name, container, slot, value, path = self.rng.choice(found)
        self.note_item(item, table, name, path)
        new = replace(value, self)
        if new is None:
            del container[slot]
        else:
            container[slot] = new
        return True

    def note_item(self, item, table, name, path):
        """Log where a change is made (before it is made)."""
        key_names = self.key_names(table)
        self.where = {"attribute": name, "path": path,
                      "item_key": {k: item[k] for k in sorted(key_names)
                                   if k in item}}

    def item_key(self, item):
        """The key attributes of an item of the request's table."""
        return {k: item[k] for k in sorted(self.key_names(None)) if k in item}


def av_slots(container, slot, value, path, nested):
    """(container, slot, value, path) of an AttributeValue and, when
    nested, of every AttributeValue inside its M and L values."""
    yield container, slot, value, path
    if not nested or tag_of(value) not in ("M", "L"):
        return
    inner = value[tag_of(value)]
    if isinstance(inner, dict):
        for name, member in inner.items():
            yield from av_slots(inner, name, member, f"{path}.{name}", True)
    elif isinstance(inner, list):
        for i, member in enumerate(inner):
            yield from av_slots(inner, i, member, f"{path}[{i}]", True)


def tag_of(value):
    """The tag of an AttributeValue ({"S": "x"} -> "S"), or None."""
    if isinstance(value, dict) and len(value) == 1:
        return next(iter(value))
    return None


def tagged(*tags):
    """A wants() for AttributeValues with one of these tags."""
    return lambda value: tag_of(value) in tags


def any_value(value):
    """A wants() for every well-formed AttributeValue."""
    return tag_of(value) is not None


def value_mutation(wants, replace, keys=False):
    """A mutation that replaces one AttributeValue wants() accepts."""
    return lambda m: m.change_one(wants, replace, keys)


def in_string(value, m, make):
    """An S value, or one SS member, rewritten by make(text, m)."""
    tag = tag_of(value)
    if tag == "S":
        return {"S": make(value["S"], m)}
    members = list(value[tag])
    i = m.rng.randrange(len(members))
    members[i] = make(members[i], m)
    return {tag: members}


def in_number(value, m, text):
    """An N value, or one NS member, replaced by text."""
    if tag_of(value) == "N":
        return {"N": text}
    members = list(value["NS"])
    members[m.rng.randrange(len(members))] = text
    return {"NS": members}


def strings_or_members(value):
    """S values and non-empty SS values."""
    return tag_of(value) == "S" or (tag_of(value) == "SS" and value["SS"])


def numbers_or_members(value):
    """N values and non-empty NS values."""
    return tag_of(value) == "N" or (tag_of(value) == "NS" and value["NS"])


def split_at(text, m):
    """A random place in text."""
    return m.rng.randint(0, len(text))


def with_raw_bytes(text, m):
    """text with bytes that are not UTF-8 inside."""
    at = split_at(text, m)
    return text[:at] + m.raw_text(m.rng.choice(BAD_UTF8)) + text[at:]


def with_lone_surrogate(text, m):
    """text with a \\ud800 escape that no low surrogate follows."""
    at = split_at(text, m)
    return text[:at] + m.raw_text(b"\\ud800") + text[at:]


def wrong_member(value, _m):
    """A set with a member of the wrong JSON type."""
    tag = tag_of(value)
    wrong = {"SS": 5, "NS": 1, "BS": True}[tag]
    return {tag: list(value[tag]) + [wrong]}


def second_tag(value, _m):
    """The value with another tag beside its own."""
    extra = ("N", "1") if tag_of(value) != "N" else ("S", "x")
    return dict(value, **{extra[0]: extra[1]})


def bad_base64_member(value, m):
    """A BS with one member that is not base64."""
    members = list(value["BS"])
    members[m.rng.randrange(len(members))] = m.rng.choice(BAD_BASE64)
    return {"BS": members}


def wrapped(levels):
    """The value wrapped in levels of {"M": {DEEP_KEY: ...}}."""
    def wrap(value, m):
        opening = json.dumps({"M": {DEEP_KEY: 0}})[:-3]
        return m.raw_value(opening * levels + json.dumps(value, ensure_ascii=False)
                           + "}}" * levels)
    return wrap


def wrong_key_type(value, _m):
    """A key as B, its text base64-encoded (no column reads B as text)."""
    text = value[tag_of(value)]
    return {"B": base64.b64encode(str(text).encode()).decode()}


# ---- whole-response mutations


def response_member(m, name, choices):
    """Replace a top-level member of the answer that is there."""
    if name not in m.doc:
        return False
    m.where = {"path": name}
    m.doc[name] = m.rng.choice(choices)
    return True


def item_not_object(m):
    """One element of Items (or Item) is not an object."""
    bad = m.rng.choice([5, [], "x", None])
    if isinstance(m.doc.get("Items"), list) and m.doc["Items"]:
        i = m.rng.randrange(len(m.doc["Items"]))
        m.where = {"path": f"Items[{i}]", "item_key": m.item_key(m.doc["Items"][i])}
        m.doc["Items"][i] = bad
        return True
    if isinstance(m.doc.get("Item"), dict):
        m.where = {"path": "Item", "item_key": m.item_key(m.doc["Item"])}
        m.doc["Item"] = [] if bad is None else bad
        return True
    return False


def not_object(m):
    """A body that is JSON, but not an object."""
    m.body = m.rng.choice([b"[]", b"null", b"5", b'"Items"'])
    return True


def error_200(m):
    """An error body answered with status 200."""
    error = m.rng.choice([("ResourceNotFoundException", "Requested resource not found"),
                          ("ValidationException", "One or more parameter values were invalid"),
                          ("InternalServerError", "Internal server error")])
    m.body = json.dumps({"__type": DDB + error[0], "message": error[1]}).encode()
    m.where = {"path": error[0]}
    return True


def truncate_body(m):
    """The body cut short, framed as if it were whole."""
    whole = m.encoded()
    m.body = whole[:m.rng.randint(1, len(whole) - 1)]
    return True


def truncate_stream(m):
    """The full length announced, part of the body sent."""
    m.cut = m.rng.randint(0, len(m.encoded()) - 1)
    m.delivery = "truncate_stream"
    return True


def bad_crc(m):
    """The real body with a wrong x-amz-crc32."""
    m.delivery = "bad_crc"
    return True


def lek_mutation(cycle):
    """lek_repeat (cycle False) and lek_cycle: see the module docstring."""
    def mutate(m):
        if m.action not in ("Query", "Scan"):
            return False
        start = m.request.get("ExclusiveStartKey")
        stream_id = json.dumps({k: v for k, v in m.request.items()
                                if k != "ExclusiveStartKey"}, sort_keys=True)
        stream = m.streams.get(stream_id)
        if start is None:
            items = [i for i in m.doc.get("Items") or [] if isinstance(i, dict)]
            if not items:
                return False
            stream = {"keys": [m.item_key(items[0]), m.item_key(items[-1])],
                      "given": []}
            m.streams[stream_id] = stream
            served = stream["keys"][0]
        elif stream is None:
            return False
        elif cycle:
            first, last = stream["keys"]
            served = last if start == first else first
        else:
            served = start
        m.where = {"path": "LastEvaluatedKey", "stream": stream_id[:200],
                   "repeated": served in stream["given"]}
        stream["given"].append(served)
        m.doc["LastEvaluatedKey"] = served
        return True
    return mutate


def lek_malformed(m):
    """A LastEvaluatedKey of the wrong shape."""
    if m.action not in ("Query", "Scan"):
        return False
    key_names = sorted(m.key_names(None))
    m.where = {"path": "LastEvaluatedKey"}
    m.doc["LastEvaluatedKey"] = m.rng.choice(
        ["x", [], {name: {"S": 5} for name in key_names}])
    return True


# ---- benign rewrites


def shuffle_members(m):
    """Object members in random order, at every level."""
    def shuffle(value):
        if isinstance(value, dict):
            pairs = [(k, shuffle(v)) for k, v in value.items()]
            m.rng.shuffle(pairs)
            return dict(pairs)
        if isinstance(value, list):
            return [shuffle(v) for v in value]
        return value
    m.doc = shuffle(m.doc)
    return True


def rewrite_json(m, spaces, escapes):
    """Serialise with whitespace between tokens and/or escaped strings."""
    rng = m.rng

    def gap():
        return rng.choice(["", " ", "\n", "\t", "\r\n  ", "   "]) if spaces else ""

    def string(text):
        if not escapes:
            return json.dumps(text, ensure_ascii=False)
        out = []
        for ch in text:
            if rng.random() < 0.5:
                out.append(json.dumps(ch, ensure_ascii=False)[1:-1])
            elif ch == "/":
                out.append("\\/")
            elif ord(ch) > 0xFFFF:
                code = ord(ch) - 0x10000
                out.append(f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04X}")
            else:
                out.append(f"\\u{ord(ch):04{rng.choice('xX')}}")
        return '"' + "".join(out) + '"'

    def emit(value):
        if isinstance(value, dict):
            members = [gap() + string(k) + gap() + ":" + gap() + emit(v) + gap()
                       for k, v in value.items()]
            return "{" + ",".join(members) + gap() + "}"
        if isinstance(value, list):
            return "[" + ",".join(gap() + emit(v) + gap() for v in value) + gap() + "]"
        if isinstance(value, str):
            return string(value)
        return json.dumps(value)

    m.serialize = lambda doc: gap() + emit(doc) + gap()
    return True


def respell(text, rng):
    """An equal number, spelt differently (DynamoDB accepts each form)."""
    try:
        number = decimal.Decimal(text)
    except decimal.InvalidOperation:
        return text
    sign, digits, exponent = number.as_tuple()
    minus = "-" if sign else ""
    body = text.lstrip("-")
    choice = rng.randrange(3)
    if choice == 0:
        return f"{minus}00{body}"
    if choice == 1 and "e" not in body.lower():
        return text + ("00" if "." in body else ".000")
    shown = "".join(map(str, digits))
    mantissa = shown[0] + ("." + shown[1:] if len(shown) > 1 else "")
    power = exponent + len(shown) - 1
    return f"{minus}{mantissa}{rng.choice('eE')}{rng.choice(['+', ''])}{power}".replace("+-", "-")


def number_spellings(m):
    """Every N value and NS member spelt differently."""
    found = [False]

    def visit(value):
        if isinstance(value, dict):
            for k, v in value.items():
                if k == "N" and isinstance(v, str):
                    value[k] = respell(v, m.rng)
                    found[0] = True
                elif k == "NS" and isinstance(v, list):
                    value[k] = [respell(x, m.rng) if isinstance(x, str) else x
                                for x in v]
                    found[0] = True
                else:
                    visit(v)
        elif isinstance(value, list):
            for v in value:
                visit(v)
    for name in ("Items", "Item", "Responses", "LastEvaluatedKey"):
        visit(m.doc.get(name))
    return found[0]


# name -> (class, function(Mutation) -> whether anything changed)
MUTATIONS = {
    "s_not_string": ("shape", value_mutation(tagged("S"), lambda v, m: {"S": 5})),
    "n_not_string": ("shape", value_mutation(tagged("N"), lambda v, m: {"N": True})),
    "m_not_object": ("shape", value_mutation(tagged("M"), lambda v, m: {"M": []})),
    "l_not_array": ("shape", value_mutation(tagged("L"), lambda v, m: {"L": {}})),
    "bool_not_bool": ("shape", value_mutation(tagged("BOOL"),
                                              lambda v, m: {"BOOL": "yes"})),
    "null_false": ("shape", value_mutation(any_value, lambda v, m: {"NULL": False})),
    "set_not_array": ("shape", value_mutation(
        tagged(*SET_TAGS), lambda v, m: {tag_of(v): "a"})),
    "set_member_type": ("shape", value_mutation(tagged(*SET_TAGS), wrong_member)),
    "set_empty": ("shape", value_mutation(tagged(*SET_TAGS),
                                          lambda v, m: {tag_of(v): []})),
    "two_tags": ("shape", value_mutation(any_value, second_tag)),
    "no_tag": ("shape", value_mutation(any_value, lambda v, m: {})),
    "tag_unknown": ("tag", value_mutation(any_value,
                                          lambda v, m: {"Z": v[tag_of(v)]})),
    "tag_lowercase": ("tag", value_mutation(
        any_value, lambda v, m: {tag_of(v).lower(): v[tag_of(v)]})),
    "tag_empty": ("tag", value_mutation(any_value, lambda v, m: {"": v[tag_of(v)]})),
    "utf8_raw": ("utf8", value_mutation(
        strings_or_members, lambda v, m: in_string(v, m, with_raw_bytes))),
    "utf8_surrogate": ("utf8", value_mutation(
        strings_or_members, lambda v, m: in_string(v, m, with_lone_surrogate))),
    "b_bad": ("base64", value_mutation(
        tagged("B"), lambda v, m: {"B": m.rng.choice(BAD_BASE64)})),
    "bs_bad": ("base64", value_mutation(tagged("BS"), bad_base64_member)),
    "n_garbage": ("number", value_mutation(
        numbers_or_members, lambda v, m: in_number(v, m, "12abc"))),
    "n_empty": ("number", value_mutation(
        numbers_or_members, lambda v, m: in_number(v, m, ""))),
    "n_overflow": ("number", value_mutation(
        numbers_or_members, lambda v, m: in_number(v, m, "1e999"))),
    "n_40digits": ("number", value_mutation(
        numbers_or_members,
        lambda v, m: in_number(v, m, "1234567890123456789012345678901234567890"))),
    "deep_33": ("depth", value_mutation(any_value, wrapped(33))),
    "deep_500": ("depth", value_mutation(any_value, wrapped(500))),
    "huge_string": ("huge", value_mutation(
        tagged("S"), lambda v, m: {"S": v["S"] + HUGE_FILL})),
    "huge_number": ("huge", value_mutation(
        numbers_or_members, lambda v, m: in_number(v, m, "9" * 5000))),
    "key_missing": ("key", value_mutation(any_value, lambda v, m: None, keys=True)),
    "key_malformed": ("key", value_mutation(
        any_value, lambda v, m: m.rng.choice([{"S": 5}, {}]), keys=True)),
    "key_wrong_type": ("key", value_mutation(any_value, wrong_key_type, keys=True)),
    "items_not_array": ("response", lambda m: response_member(m, "Items", [{}, "x"])),
    "item_not_object": ("response", item_not_object),
    "count_not_number": ("response", lambda m: response_member(m, "Count", ["3", None])),
    "responses_not_object": ("response",
                             lambda m: response_member(m, "Responses", [[]])),
    "not_object": ("response", not_object),
    "error_200": ("response", error_200),
    "truncate_body": ("body", truncate_body),
    "truncate_stream": ("body", truncate_stream),
    "bad_crc": ("body", bad_crc),
    "lek_repeat": ("lek", lek_mutation(cycle=False)),
    "lek_cycle": ("lek", lek_mutation(cycle=True)),
    "lek_malformed": ("lek", lek_malformed),
    "shuffle_members": ("benign", shuffle_members),
    "whitespace": ("benign", lambda m: rewrite_json(m, spaces=True, escapes=False)),
    "unicode_escapes": ("benign", lambda m: rewrite_json(m, spaces=False, escapes=True)),
    "number_spellings": ("benign", number_spellings),
}
