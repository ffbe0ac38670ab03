#!/bin/sh
# Regenerates the binary fixtures from their sources with LibreOffice
# (apt-get install -y --no-install-recommends libreoffice-writer-nogui).
# The outputs are committed, so tests do not need LibreOffice.
set -e
cd "$(dirname "$0")"
soffice --headless --convert-to pdf returns.txt
soffice --headless --convert-to 'docx:MS Word 2007 XML' returns.txt
soffice --headless --convert-to 'docx:MS Word 2007 XML' plans.html
