#!/usr/bin/env python3
"""Rebuilds the reference-code table of worker/src/analysis/twoddoc/refcodes.rs from the ANTS 2D-Doc
specification v3.2.6 (section 16.2). Development tool, not used at build or run time.

Needs: pdftotext and pdfimages (Debian poppler-utils), Python packages cryptography, zxing-cpp and pillow.
Usage: extract-spec-refcodes.py SPEC.pdf FR00-CERT.pem > table.rs

Each "Message complet" row is rebuilt from the PDF text: a line break inside a value is either nothing or a
space, and justified lines stretch spaces, so every combination is tried and the one whose signature verifies
with the test certificate (section 16.1) is kept. Codes the text cannot give back (runs of spaces in MRZ
values) are taken from the DataMatrix images of the same pages, decoded with zxing-cpp and verified the same
way. The V1 codes (Base256 signature) are left out.
"""
import base64, collections, datetime, glob, itertools, os, re, subprocess, sys, tempfile

from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, utils
from PIL import Image
import zxingcpp

pdf, cert_pem = sys.argv[1], sys.argv[2]
pub = x509.load_pem_x509_certificate(open(cert_pem, 'rb').read()).public_key()


def verify(data, sig):
    if len(sig) != 64:
        return False
    der = utils.encode_dss_signature(int.from_bytes(sig[:32], 'big'), int.from_bytes(sig[32:], 'big'))
    try:
        pub.verify(der, data, ec.ECDSA(hashes.SHA256()))
        return True
    except Exception:
        return False


def b32(s):
    return base64.b32decode(s + '=' * ((8 - len(s) % 8) % 8))


work = tempfile.mkdtemp()
subprocess.run(['pdftotext', '-layout', pdf, os.path.join(work, 'spec.txt')], check=True)
subprocess.run(['pdfimages', '-p', '-png', '-f', '155', '-l', '216', pdf, os.path.join(work, 'i')], check=True)
images = []
for f in sorted(glob.glob(os.path.join(work, 'i-*.png'))):
    im = Image.open(f)
    found = zxingcpp.read_barcodes(im, formats=zxingcpp.BarcodeFormat.DataMatrix)
    if not found:  # the smallest images decode once enlarged
        im = im.convert('L').resize((im.size[0] * 3, im.size[1] * 3), Image.NEAREST)
        found = zxingcpp.read_barcodes(im, formats=zxingcpp.BarcodeFormat.DataMatrix)
    images.extend(r.bytes for r in found)

lines = open(os.path.join(work, 'spec.txt')).read().split('\n')
start = next(i for i, l in enumerate(lines) if l.startswith('16.2.1.'))
noise = re.compile(r'(Page \d+ sur 216|Spécifications techniques|des codes à barres 2D-Doc|^\s*Transverses\s*$|'
                   r'Date : 24/03/2023|Version : 3\.2\.6)')
blocks, cur, mode, section = [], None, None, None
for l in lines[start:]:
    m = re.match(r'^16\.2\.(\d)\.\s+Format (V\d)', l)
    if m:
        section = m.group(2)
        continue
    if re.search(r'Type de document\s{2,}', l):
        cur = {'format': section, 'title': re.split(r'\s{2,}', l.strip(), 1)[1], 'msg': []}
        blocks.append(cur)
        mode = None
        continue
    if cur is None or noise.search(l):
        continue
    if 'Message complet' in l:
        mode = 'msg'
        cur['msg'].append(l.split('Message complet', 1)[1].strip())
    elif 'Données signées' in l or 'Signature (binaire)' in l or re.match(r'^\s*(Code 2D-DOC|Date d|Périmètre|Pays|Champs)', l):
        mode = None
    elif mode == 'msg' and l.strip():
        cur['msg'].append(l.strip())


def from_text(block):
    joined = '\x00'.join(re.sub(r' {2,}', ' ', p) for p in block['msg'])
    for name, ch in (('GS', '\x1d'), ('RS', '\x1e'), ('US', '\x1f')):
        joined = re.sub('<\x00?' + '\x00?'.join(name) + '\x00?>', ch, joined)
    if '\x1f' not in joined:
        return None
    data, sig = joined.split('\x1f', 1)
    sig = sig.replace('\x00', '').replace(' ', '')
    annex = None
    if '\x1d' in sig:
        sig, annex = sig.split('\x1d', 1)
    pieces = data.split('\x00')
    if len(pieces) > 17:
        return None
    found = [s for s in (pieces[0] + ''.join(c + p for c, p in zip(combo, pieces[1:]))
                         for combo in itertools.product(('', ' '), repeat=len(pieces) - 1))
             if verify(s.encode('latin-1'), b32(sig))]
    if len(found) != 1:
        return None
    return (found[0] + '\x1f' + sig + ('\x1d' + annex if annex is not None else '')).encode('latin-1')


rows = []
for b in blocks:
    if b['format'] == 'V1' or not b['msg']:
        continue
    code = b['title'].split()[0]
    raw, source = from_text(b), 'text'
    if raw is None:
        marker = {'V2': b'DC02', 'V3': b'DC03', 'V4': b'DC04'}[b['format']]
        candidates = [i for i in images if i[:4] == marker and i[20:22].decode() == code]
        assert len(candidates) == 1, b['title']
        raw, source = candidates[0], 'image'
        data, sig = raw.split(b'\x1f', 1)
        assert verify(data, b32(sig.split(b'\x1d')[0].decode()))
    assert raw in images, 'text and image differ for ' + b['title']
    rows.append((b['format'], code, source, raw.decode('ascii'), b['title']))


def iso(h):
    return None if h == 'FFFF' else (datetime.date(2000, 1, 1) + datetime.timedelta(days=int(h, 16))).isoformat()


count = collections.Counter((f, c) for f, c, *_ in rows)
seen = collections.Counter()
for f, c, source, s, title in rows:
    seen[(f, c)] += 1
    rid = f'{f}-{c}' + (f'-{seen[(f, c)]}' if count[(f, c)] > 1 else '')
    lit = s.replace('\\', '\\\\').replace('"', '\\"').replace('\x1d', '\\x1d').replace('\x1e', '\\x1e').replace('\x1f', '\\x1f')
    issue = iso(s[12:16])
    title = re.sub(r'^\S+\s*[-–]\s*', '', title).replace('"', '\\"')
    print('    RefCode {\n        id: "%s",\n        source: "%s",\n        title: "%s",\n        doc_type: "%s",\n'
          '        issue_date: %s,\n        signature_date: "%s",\n        raw: "%s",\n    },'
          % (rid, source, title, c, 'Some("%s")' % issue if issue else 'None', iso(s[16:20]), lit))
