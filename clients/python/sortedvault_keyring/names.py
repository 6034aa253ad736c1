"""keyring's names in the vault: names the vault refuses are stored in a reversible encoding.

keyring allows any string as a service or username, the empty username and control characters
(tab, newline…) included; the vault refuses empty names, control characters and text not in Unicode
NFC. A name the vault accepts is stored as it is, so items stay shared with `sortedvault` and other
clients. Any other name, and any name that already starts with PREFIX, is stored as PREFIX followed by
its UTF-8 bytes with "%", control bytes and every byte of 0x80 and above percent-encoded
(uppercase hex): plain ASCII the vault always accepts, and never a name of the first kind. The rule
is docs/helpers.md's "Names the vault refuses"; the git helper keeps the same one (VaultNameEncoding),
and both are held to Tests/Support/vault-name-encoding.json.

    encode("")            == "%sv:"
    encode("a\tb")        == "%sv:a%09b"
    encode("pypi.org")    == "pypi.org"
    decode(encode(name))  == name
"""

import unicodedata

PREFIX = "%sv:"


def accepted(name):
    """Whether the vault stores `name` as it is: not empty, no control character, in NFC (ItemKey.checkName)."""
    if not name:
        return False
    # Cc: C0, DEL and C1, as the vault's check; Cs: a lone surrogate, which no UTF-8 can carry.
    if any(unicodedata.category(character) in ("Cc", "Cs") for character in name):
        return False
    return unicodedata.is_normalized("NFC", name)


def encode(name):
    """The vault's name for keyring's `name`."""
    if accepted(name) and not name.startswith(PREFIX):
        return name
    data = name.encode("utf-8", "surrogatepass")
    return PREFIX + "".join(
        "%%%02X" % byte if byte < 0x20 or byte == 0x7F or byte >= 0x80 or byte == 0x25 else chr(byte)
        for byte in data)


def decode(stored):
    """keyring's name for a name read from the vault; a name not in the encoding is returned as it is."""
    if not stored.startswith(PREFIX):
        return stored
    text = stored[len(PREFIX):]
    data = bytearray()
    index = 0
    while index < len(text):
        character = text[index]
        if character == "%":
            digits = text[index + 1:index + 3]
            if len(digits) != 2 or any(c not in "0123456789abcdefABCDEF" for c in digits):
                return stored
            data.append(int(digits, 16))
            index += 3
        elif ord(character) < 0x80:
            data.append(ord(character))
            index += 1
        else:
            return stored
    try:
        return data.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return stored
