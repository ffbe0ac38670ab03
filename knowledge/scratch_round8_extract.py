# Eighth round scratch (docs/knowledge-bases.md, "The eighth round"): python3 knowledge/scratch_round8_extract.py OUTDIR REPO.git... writes
# one pseudo knowledge base per repository for SCRATCH_TRAIN. Reverted with the round.
# Builds pseudo knowledge bases in the evalset's format from question headings of public
# repositories' documentation (the seventh round's recipe): one base per repository, one
# source per file (split every 15 questions), the questions never in the sources.
import subprocess, re, sys, os, json, random
QW = re.compile(r"^(how|what|why|when|where|who|which|can|is|are|do|does|should|will|could|would|may|i |my )", re.I)
def git(repo, *a):
    return subprocess.run(["git", "--git-dir", repo] + list(a), capture_output=True).stdout
def clean(t):
    t = re.sub(r"```.*?```", " ", t, flags=re.S)
    t = re.sub(r"~~~.*?~~~", " ", t, flags=re.S)
    t = re.sub(r"<[^>]+>", " ", t)
    t = re.sub(r"!\[[^\]]*\]\([^)]*\)", " ", t)
    t = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", t)
    t = re.sub(r"\[([^\]]*)\]\[[^\]]*\]", r"\1", t)
    t = re.sub(r"^\s*\[[^\]]+\]:.*$", " ", t, flags=re.M)
    t = re.sub(r"\{\{.*?\}\}|\{%.*?%\}", " ", t, flags=re.S)
    t = re.sub(r"[*_`]{1,3}", "", t)
    t = re.sub(r"^\s*#{1,6}\s*", "", t, flags=re.M)
    t = re.sub(r"^\s*[-*+]\s+", "", t, flags=re.M)
    t = re.sub(r"^\s*>\s?", "", t, flags=re.M)
    t = re.sub(r"^\s*\|.*\|\s*$", " ", t, flags=re.M)
    t = re.sub(r"&[a-z]+;", " ", t)
    paras = [re.sub(r"\s+", " ", p).strip() for p in re.split(r"\n\s*\n", t)]
    return [p for p in paras if len(p.split()) >= 3]
def shorten(paras):
    out, n = [], 0
    for p in paras:
        if out and n + len(p) > 1000: break
        out.append(p); n += len(p)
    s = "\n\n".join(out)
    w = s.split()
    if len(w) > 400: s = " ".join(w[:400])
    return s
def isq(h):
    h = h.strip()
    return h.endswith("?") or bool(QW.match(h))
def mdpairs(text):
    lines = text.split("\n"); pairs = []; title = None
    heads = []
    infence = False
    for i, l in enumerate(lines):
        if l.strip().startswith("```"): infence = not infence
        if infence: continue
        m = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", l)
        if m:
            heads.append((i, len(m.group(1)), m.group(2)))
            if title is None and len(m.group(1)) == 1: title = m.group(2)
        else:
            m2 = re.match(r"^\s*\*\*(.+?)\*\*\s*$", l)
            if m2 and m2.group(1).strip().endswith("?"):
                heads.append((i, 7, m2.group(1)))
    for k, (i, lvl, h) in enumerate(heads):
        hq = re.sub(r"[*_`]|\[([^\]]*)\]\([^)]*\)", lambda m: m.group(1) or "", h).strip()
        hq = re.sub(r"^(\d+[.)]|Q[.:])\s*", "", hq).strip()
        if not isq(hq) or len(hq.split()) < 3: continue
        end = len(lines)
        for j, l2, _ in heads[k+1:]:
            if l2 <= lvl or lvl == 7: end = j; break
        body = clean("\n".join(lines[i+1:end]))
        a = shorten(body)
        if len(a.split()) < 8: continue
        pairs.append((hq, a))
    return title, pairs
def rstpairs(text):
    lines = text.split("\n"); pairs = []; heads = []
    under = {}
    for i in range(len(lines)-1):
        l, u = lines[i], lines[i+1]
        if l.strip() and re.match(r"^([=\-~^\"'`#*+])\1{2,}\s*$", u) and len(u.strip()) >= len(l.strip())-1:
            c = u.strip()[0]
            if c not in under: under[c] = len(under)+1
            heads.append((i, under[c], l.strip()))
    for k, (i, lvl, h) in enumerate(heads):
        hq = re.sub(r"[*_`]", "", h).strip()
        if not isq(hq) or len(hq.split()) < 3: continue
        end = len(lines)
        for j, l2, _ in heads[k+1:]:
            if l2 <= lvl: end = j; break
        body = "\n".join(lines[i+2:end])
        body = re.sub(r"^\.\. .*$", " ", body, flags=re.M)
        body = re.sub(r"::\s*$", ".", body, flags=re.M)
        body = re.sub(r":[a-z:]+:`([^`<]*)[^`]*`", r"\1", body)
        a = shorten(clean(body))
        if len(a.split()) < 8: continue
        pairs.append((hq, a))
    return None, pairs
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
stats = {}
for repo in sys.argv[2:]:
    name = os.path.basename(os.path.dirname(repo)).replace("+", "_")
    files = git(repo, "ls-tree", "-r", "--name-only", "HEAD").decode("utf-8", "replace").split("\n")
    srcs = []
    for f in sorted(files):
        low = f.lower()
        if not low.endswith((".md", ".markdown", ".rst", ".txt")): continue
        if re.search(r"(^|/)(i18n|translations?|locales?|l10n|[a-z]{2}[-_][a-z]{2}|zh|ja|ko|es|fr|de|ru|pt|it|node_modules|vendor)(/|$)", low): continue
        if re.search(r"changelog|changes|release|license|contributing|code_of_conduct", low): continue
        raw = git(repo, "show", "HEAD:" + f)
        if len(raw) > 2_000_000: continue
        text = raw.decode("utf-8", "replace")
        title, pairs = (rstpairs(text) if low.endswith(".rst") else mdpairs(text))
        if not pairs: continue
        base = title or os.path.splitext(os.path.basename(f))[0].replace("-", " ").replace("_", " ")
        for s in range(0, len(pairs), 15):
            srcs.append((base if s == 0 else f"{base} ({s//15+1})", pairs[s:s+15]))
    seen = set(); n = 0
    lines = []
    for title, pairs in srcs:
        body = []
        for q, a in pairs:
            key = q.lower()
            if key in seen: continue
            seen.add(key); n += 1
            body.append(f"## Q: {q}\n{a}\n")
        if body:
            lines.append(f"# source: {title}\n")
            lines.extend(body)
    stats[name] = n
    if n >= 5:
        open(os.path.join(out, name + ".md"), "w").write("\n".join(lines))
print(json.dumps(stats, indent=0), sum(stats.values()))
