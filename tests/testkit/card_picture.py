"""A picture of a model card as a reader sees it: `python -m testkit.card_picture FOLDER OUT.png` (from tests/).

The card's markdown (FOLDER/README.md) is rendered to HTML with the `markdown` package (tables, fenced code),
under a box with the metadata block the Hub reads (its `model-index` as a table of results, parsed by
huggingface_hub), images beside the card (the loss curve) inlined, and a real headless Chromium
(`testkit.browser.screenshot`) takes the whole page. docs/img/model-card.png is made this way.
"""

from __future__ import annotations

import base64
import html
import re
import sys
import tempfile
from pathlib import Path

STYLE = """
body { font-family: system-ui, 'Noto Sans CJK KR', sans-serif; max-width: 960px; margin: 1.5em auto; padding: 0 1em;
       color: #222; font-size: 15px; line-height: 1.45; }
table { border-collapse: collapse; margin: 0.5em 0 1em; font-size: 0.86em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: left; }
code, pre { background: #f4f4f4; border-radius: 3px; }
pre { padding: 0.6em; overflow-x: auto; font-size: 0.85em; }
.meta { border: 1px solid #bbb; border-radius: 6px; padding: 0.2em 1em 0.6em; background: #fafafa; }
.meta h4 { margin: 0.5em 0 0.2em; color: #555; }
img { max-width: 100%; }
h1 { border-bottom: 1px solid #ddd; }
"""


def render(folder: Path) -> str:
    """The card of `folder` as one self-contained HTML page."""
    import markdown

    text = (folder / "README.md").read_text(encoding="utf-8")
    m = re.match(r"^---\n(.*?)\n---\n", text, re.S)
    meta, body = (m.group(1), text[m.end():]) if m else ("", text)
    page = markdown.markdown(body, extensions=["tables", "fenced_code"])

    def inline(match: re.Match[str]) -> str:
        src = match.group(1)
        path = folder / src
        if not path.is_file():
            return match.group(0)
        return f'src="data:image/png;base64,{base64.b64encode(path.read_bytes()).decode()}"'

    page = re.sub(r'src="([^":]+\.png)"', inline, page)
    box = _metadata_box(meta) if meta else ""
    return (f'<!doctype html><html><head><meta charset="utf-8"><title>{html.escape(folder.name)}</title>'
            f"<style>{STYLE}</style></head><body>{box}{page}</body></html>")


def _metadata_box(meta: str) -> str:
    """The front matter as the Hub shows it: the fields, and the `model-index` as a table of its results."""
    import yaml
    from huggingface_hub.repocard_data import model_index_to_eval_results

    data = yaml.safe_load(meta)
    index = data.pop("model-index", None)
    out = ['<div class="meta"><h4>Metadata (the README.md front matter the Hub reads)</h4>',
           f"<pre>{html.escape(yaml.safe_dump(data, sort_keys=False, allow_unicode=True).strip())}</pre>"]
    if index:
        name, results = model_index_to_eval_results(index)
        rows = "".join(f"<tr><td>{html.escape(r.dataset_type)}</td><td>{html.escape(r.dataset_config or '')}</td>"
                       f"<td>{html.escape(r.dataset_split or '')}</td><td><code>{html.escape(r.metric_type)}</code></td>"
                       f"<td>{r.metric_value:.2f}</td><td>{html.escape(r.metric_name or '')}</td></tr>"
                       for r in results)
        out.append(f"<h4>model-index: {html.escape(name)}, {len(results)} results</h4><table><tr><th>dataset</th>"
                   f"<th>config</th><th>split</th><th>metric</th><th>value</th><th>name</th></tr>{rows}</table>")
    return "".join(out) + "</div>"


def main(argv: list[str] | None = None) -> int:
    from testkit.browser import screenshot

    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python -m testkit.card_picture MODEL_FOLDER OUT.png", file=sys.stderr)
        return 2
    folder, out = Path(args[0]), Path(args[1])
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "card.html"
        page.write_text(render(folder), encoding="utf-8")
        w, h = screenshot(page, out)
    print(f"{out}: {w} x {h}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
