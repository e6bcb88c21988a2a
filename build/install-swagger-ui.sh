#!/usr/bin/env bash
# Copies Swagger UI's browser files from npm's swagger-ui-dist into www/api/, where index.html loads
# them. The copies are committed (www/api/README.md says why), so only run this to change the
# version: set SWAGGER_UI_VERSION (default: the pinned one below), run, test, commit the files.
# Needs npm and its registry; nothing is installed: `npm pack` fetches the one package tarball.
set -euo pipefail
cd "$(dirname "$0")/.."

version="${SWAGGER_UI_VERSION:-5.35.0}"
target=www/api
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "install-swagger-ui: swagger-ui-dist@$version"
tarball=$(cd "$work" && npm pack "swagger-ui-dist@$version" --silent 2> /dev/null | tail -n 1)
tar -xzf "$work/$tarball" -C "$work"

# The bundle carries its own dependencies; BaseLayout needs no standalone preset. The licence files
# go along because the Apache-2.0 licence asks for them with every copy.
cp "$work/package/swagger-ui-bundle.js" "$work/package/swagger-ui.css" \
   "$work/package/favicon-16x16.png" "$work/package/favicon-32x32.png" "$target/"
cp "$work/package/LICENSE" "$target/swagger-ui.LICENSE"
cp "$work/package/NOTICE" "$target/swagger-ui.NOTICE"
cp "$work/package/swagger-ui-bundle.js.LICENSE.txt" "$target/"
# The bundle's last line points at a source map that is not copied; browsers would ask for it.
sed -i '/^\/\/# sourceMappingURL=/d' "$target/swagger-ui-bundle.js"
sed -i 's|/\*# sourceMappingURL=.*\*/||' "$target/swagger-ui.css"
echo "$version" > "$target/swagger-ui.VERSION"
ls -l "$target"
