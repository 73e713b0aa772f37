# Sourced by bench/run.sh and bench/storage.sh: serves $WWW (hard links to the listings in $DATA plus
# per-benchmark copies) from nginx on a free loopback port; sets PORT and NGINX (the pid) and stops
# nginx on exit. Needs ROOT, WORK, DATA.
WWW=$WORK/www
rm -rf "$WWW"; mkdir -p "$WWW"
for f in "$DATA"/*.json; do ln "$f" "$WWW/" 2>/dev/null || cp "$f" "$WWW/"; done
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
NGX=$WORK/nginx; rm -rf "$NGX"; mkdir -p "$NGX"
cat > "$NGX/nginx.conf" <<CONF
$( [ "$(id -u)" = 0 ] && echo "user root root;" )
daemon off; worker_processes 1; pid $NGX/nginx.pid; error_log $NGX/error.log;
events { worker_connections 64; }
http { access_log off; types { application/json json; } sendfile on;
  client_body_temp_path $NGX; proxy_temp_path $NGX; fastcgi_temp_path $NGX; uwsgi_temp_path $NGX; scgi_temp_path $NGX;
  server { listen 127.0.0.1:$PORT; root $WWW; etag on; } }
CONF
nginx -c "$NGX/nginx.conf" -p "$NGX" & NGINX=$!
trap 'kill $NGINX ${DAEMON:-} 2>/dev/null || true' EXIT
for _ in $(seq 50); do curl -sf -o /dev/null "http://127.0.0.1:$PORT/100k.json" && break; sleep 0.1; done

setup_config() {  # $1 = name, $2 = file served, [$3 = second file: a second source]
    local dir=$WORK/$1
    rm -rf "$dir"; mkdir -p "$dir/etc/sources.d"
    printf '[Daemon]\nStateDirectory=%s/state\nCacheDirectory=%s/cache\nRuntimeDirectory=%s/run\n' "$dir" "$dir" "$dir" > "$dir/etc/syncd.conf"
    printf '[Source]\nURL=http://127.0.0.1:%s/%s\n' "$PORT" "$2" > "$dir/etc/sources.d/posts.source"
    if [ -n "${3:-}" ]; then printf '[Source]\nURL=http://127.0.0.1:%s/%s\n' "$PORT" "$3" > "$dir/etc/sources.d/users.source"; fi
}
