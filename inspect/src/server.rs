//! The HTTP and WebSocket server: axum's router, served by hyper with a
//! request-head timeout, on a single-threaded tokio runtime on its own
//! thread. It reads the published snapshot and queues requests
//! for the game thread; it never touches the world.

use std::io;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::extract::rejection::QueryRejection;
use axum::extract::ws::{
    Message, WebSocket, WebSocketUpgrade, rejection::WebSocketUpgradeRejection,
};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use futures_util::{SinkExt, StreamExt};
use serde::Deserialize;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};

use crate::Shared;
use crate::control::{Command, ControlState, Request};

/// The page, embedded.
const PAGE: &str = include_str!("page.html");
/// The OpenAPI document describing every HTTP route.
pub(crate) const OPENAPI: &str = include_str!("openapi.json");
/// How long a request waits for the game thread to answer.
const ANSWER_WITHIN: Duration = Duration::from_secs(5);
/// How long one WebSocket send may take before the client is dropped as
/// too slow.
const SEND_WITHIN: Duration = Duration::from_secs(2);
/// The most entities one page lists.
pub(crate) const MAX_PAGE: usize = 500;
/// The largest offset a page may start at.
pub(crate) const MAX_OFFSET: usize = 1_000_000_000;

/// The server's state, shared by every handler.
#[derive(Clone)]
struct App {
    shared: Arc<Shared>,
    requests: crossbeam_channel::Sender<Request>,
    published: tokio::sync::watch::Receiver<u64>,
    /// The newest snapshot as JSON, made once per version by the first
    /// client that asks.
    json: Arc<Mutex<(u64, Arc<str>)>>,
}

/// Starts the server's thread.
pub(crate) fn spawn(
    listener: std::net::TcpListener,
    shared: Arc<Shared>,
    requests: crossbeam_channel::Sender<Request>,
    published: tokio::sync::watch::Receiver<u64>,
    stopped: tokio::sync::oneshot::Receiver<()>,
) -> io::Result<std::thread::JoinHandle<()>> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    std::thread::Builder::new()
        .name("sluice-inspect".into())
        .spawn(move || {
            lower_priority();
            runtime.block_on(async move {
                let listener = match TcpListener::from_std(listener) {
                    Ok(listener) => listener,
                    Err(error) => {
                        eprintln!("sluice-inspect: the listener did not start: {error}");
                        return;
                    }
                };
                let app = App {
                    shared: Arc::clone(&shared),
                    requests,
                    published,
                    json: Arc::new(Mutex::new((u64::MAX, Arc::from("")))),
                };
                let head_within = shared.options.request_head_within;
                let capped = CappedListener { listener, shared };
                tokio::select! {
                    () = serve(capped, router(app), head_within) => {}
                    _ = stopped => {}
                }
            });
            // Dropping the runtime ends every connection's task.
        })
}

/// Serves each accepted connection on its own task, as axum's `serve`
/// does, but with a timer: a connection whose request head has not all
/// arrived `head_within` after the server began reading it (a client that
/// stalls, or trickles a header a byte at a time) is closed, so a few such
/// clients cannot hold every connection slot. An idle keep-alive
/// connection waits for its next head under the same limit. A WebSocket,
/// once upgraded, is no longer HTTP and is not timed.
async fn serve(mut listener: CappedListener, router: Router, head_within: Duration) {
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(head_within);
    loop {
        let stream = listener.accept().await;
        let service = hyper_util::service::TowerToHyperService::new(router.clone());
        let connection = http
            .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
            .with_upgrades();
        tokio::spawn(async move {
            // A failed connection (reset, bad request head, timed out) only
            // ends itself.
            let _ = connection.await;
        });
    }
}

/// Puts the calling thread (the server's) at the lowest scheduling
/// priority: its work (serializing snapshots, sending them) then fills the
/// cores' idle time instead of preempting the game's threads, which on a
/// busy machine would show in the frame time.
#[cfg(target_os = "linux")]
fn lower_priority() {
    // SAFETY:
    // - `gettid` takes nothing and cannot fail; it names the calling thread.
    // - `setpriority` takes plain integers (no pointer); on Linux a thread
    //   id with `PRIO_PROCESS` sets that one thread's nice value. A failure
    //   (not allowed) leaves the priority as it was, which is harmless.
    unsafe {
        let thread = libc::gettid();
        libc::setpriority(libc::PRIO_PROCESS, thread as libc::id_t, 19);
    }
}

/// Elsewhere the server keeps the default priority.
#[cfg(not(target_os = "linux"))]
fn lower_priority() {}

fn router(app: App) -> Router {
    let max_body = app.shared.options.max_body;
    Router::new()
        .route("/", get(page))
        .route("/openapi.json", get(openapi))
        .route("/api/snapshot", get(snapshot))
        .route("/api/plan.svg", get(plan_svg))
        .route("/api/entities", get(entities))
        .route("/api/entities/{id}", get(entity))
        .route("/api/pause", post(pause))
        .route("/api/step", post(step))
        .route("/api/resume", post(resume))
        .route("/ws", get(websocket))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(axum::middleware::from_fn_with_state(max_body, limit_body))
        .layer(axum::extract::DefaultBodyLimit::max(max_body))
        .with_state(app)
}

/// A JSON error: `{"error": "..."}` with `status`.
fn error(status: StatusCode, message: impl Into<String>) -> Response {
    (
        status,
        axum::Json(serde_json::json!({ "error": message.into() })),
    )
        .into_response()
}

async fn not_found(uri: axum::http::Uri) -> Response {
    error(
        StatusCode::NOT_FOUND,
        format!("no route `{}` (see /openapi.json)", uri.path()),
    )
}

async fn method_not_allowed(method: axum::http::Method, uri: axum::http::Uri) -> Response {
    error(
        StatusCode::METHOD_NOT_ALLOWED,
        format!(
            "`{}` does not take {method} (see /openapi.json)",
            uri.path()
        ),
    )
}

/// Refuses a body announced larger than the limit before reading it.
async fn limit_body(
    State(max_body): State<usize>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let announced = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u64>().ok());
    if announced.is_some_and(|length| length > max_body as u64) {
        return error(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("request body over the limit of {max_body} bytes"),
        );
    }
    next.run(request).await
}

async fn page() -> Html<&'static str> {
    Html(PAGE)
}

async fn openapi() -> Response {
    ([(header::CONTENT_TYPE, "application/json")], OPENAPI).into_response()
}

impl App {
    /// The newest snapshot as JSON.
    fn snapshot_json(&self) -> Arc<str> {
        let snapshot = self.shared.snapshot.load();
        let mut cache = self
            .json
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        if cache.0 != snapshot.version {
            let json = serde_json::to_string(&**snapshot).unwrap_or_else(|_| "{}".into());
            *cache = (snapshot.version, Arc::from(json));
        }
        Arc::clone(&cache.1)
    }

    /// Queues `request` for the game thread and waits for its answer.
    async fn ask<T>(
        &self,
        make: impl FnOnce(tokio::sync::oneshot::Sender<T>) -> Request,
    ) -> Result<T, Response> {
        let (reply, answer) = tokio::sync::oneshot::channel();
        match self.requests.try_send(make(reply)) {
            Ok(()) => {}
            Err(crossbeam_channel::TrySendError::Full(_)) => {
                return Err(error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "too many requests wait for the game thread; try again",
                ));
            }
            Err(crossbeam_channel::TrySendError::Disconnected(_)) => {
                return Err(error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "the game has stopped",
                ));
            }
        }
        match tokio::time::timeout(ANSWER_WITHIN, answer).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(_)) => Err(error(
                StatusCode::SERVICE_UNAVAILABLE,
                "the game has stopped",
            )),
            Err(_) => Err(error(
                StatusCode::SERVICE_UNAVAILABLE,
                "the game thread did not answer within 5 s (is it between frames?)",
            )),
        }
    }

    async fn control(&self, command: Command) -> Result<ControlState, Response> {
        self.ask(|reply| Request::Control(command, reply)).await
    }
}

async fn snapshot(State(app): State<App>) -> Response {
    let json = app.snapshot_json();
    (
        [(header::CONTENT_TYPE, "application/json")],
        json.to_string(),
    )
        .into_response()
}

async fn plan_svg(State(app): State<App>) -> Response {
    let picture = app.shared.plan_svg.load();
    let mut response = picture.1.clone().into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("image/svg+xml"),
    );
    response
}

/// The query of `/api/entities`.
#[derive(Debug, Deserialize)]
struct Page {
    #[serde(default)]
    offset: usize,
    #[serde(default = "default_limit")]
    limit: usize,
}

fn default_limit() -> usize {
    50
}

async fn entities(State(app): State<App>, page: Result<Query<Page>, QueryRejection>) -> Response {
    let Query(page) = match page {
        Ok(page) => page,
        Err(rejection) => {
            return error(
                StatusCode::BAD_REQUEST,
                format!("bad query: {}", rejection.body_text()),
            );
        }
    };
    if page.offset > MAX_OFFSET {
        return error(
            StatusCode::BAD_REQUEST,
            format!("offset {} is over the most, {MAX_OFFSET}", page.offset),
        );
    }
    if page.limit > MAX_PAGE {
        return error(
            StatusCode::BAD_REQUEST,
            format!("limit {} is over the most, {MAX_PAGE}", page.limit),
        );
    }
    match app
        .ask(|reply| Request::Entities(page.offset, page.limit, reply))
        .await
    {
        Ok(list) => axum::Json(list).into_response(),
        Err(response) => response,
    }
}

async fn entity(State(app): State<App>, Path(id): Path<String>) -> Response {
    let Ok(id) = id.parse::<u64>() else {
        return error(
            StatusCode::BAD_REQUEST,
            format!("entity id `{id}` is not a whole number (see Entity::id)"),
        );
    };
    match app.ask(|reply| Request::Entity(id, reply)).await {
        Ok(Some(view)) => axum::Json(view).into_response(),
        Ok(None) => error(StatusCode::NOT_FOUND, format!("no live entity has id {id}")),
        Err(response) => response,
    }
}

async fn run_command(app: App, command: Command) -> Response {
    match app.control(command).await {
        Ok(state) => axum::Json(state).into_response(),
        Err(response) => response,
    }
}

async fn pause(State(app): State<App>) -> Response {
    run_command(app, Command::Pause).await
}

async fn step(State(app): State<App>) -> Response {
    run_command(app, Command::Step).await
}

async fn resume(State(app): State<App>) -> Response {
    run_command(app, Command::Resume).await
}

async fn websocket(
    State(app): State<App>,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Response {
    match upgrade {
        Ok(upgrade) => upgrade
            .max_message_size(app.shared.options.max_body)
            .on_upgrade(move |socket| serve_socket(app, socket)),
        Err(rejection) => error(
            StatusCode::BAD_REQUEST,
            format!("not a WebSocket upgrade: {}", rejection.body_text()),
        ),
    }
}

/// What a client may send over the WebSocket.
#[derive(Debug, Deserialize)]
#[serde(tag = "cmd", rename_all = "lowercase", deny_unknown_fields)]
enum ClientMessage {
    Pause {},
    Step {},
    Resume {},
    Entity {
        id: u64,
    },
    Entities {
        #[serde(default)]
        offset: usize,
        #[serde(default = "default_limit")]
        limit: usize,
    },
}

/// One WebSocket client: the newest snapshot whenever one is published,
/// and answers to its commands. A client too slow to take a message within
/// [`SEND_WITHIN`] is dropped; one that falls behind just skips snapshots
/// (the watch holds only the newest).
async fn serve_socket(app: App, socket: WebSocket) {
    let (mut sink, mut stream) = socket.split();
    let mut published = app.published.clone();
    published.mark_changed();
    loop {
        let outgoing = tokio::select! {
            changed = published.changed() => {
                if changed.is_err() {
                    break;
                }
                format!("{{\"type\":\"snapshot\",\"snapshot\":{}}}", app.snapshot_json())
            }
            incoming = stream.next() => match incoming {
                Some(Ok(Message::Text(text))) => answer(&app, text.as_str()).await,
                Some(Ok(Message::Binary(_))) => socket_error("binary messages are not understood; send JSON text"),
                Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
                Some(Ok(Message::Close(_))) | None => break,
                Some(Err(error)) => {
                    // A frame over the size limit or broken framing ends
                    // the connection; tell the client why if it listens.
                    let message = socket_error(&format!("connection error: {error}"));
                    let _ = tokio::time::timeout(SEND_WITHIN, sink.send(Message::Text(message.into()))).await;
                    break;
                }
            },
        };
        match tokio::time::timeout(SEND_WITHIN, sink.send(Message::Text(outgoing.into()))).await {
            Ok(Ok(())) => {}
            _ => break,
        }
    }
}

fn socket_error(message: &str) -> String {
    serde_json::json!({ "type": "error", "error": message }).to_string()
}

/// The answer to one client message.
async fn answer(app: &App, text: &str) -> String {
    let message = match serde_json::from_str::<ClientMessage>(text) {
        Ok(message) => message,
        Err(error) => {
            return socket_error(&format!(
                "malformed message ({error}); send {{\"cmd\": \"pause\" | \"step\" | \"resume\"}}, {{\"cmd\": \"entity\", \"id\": N}} or {{\"cmd\": \"entities\", \"offset\": N, \"limit\": N}}"
            ));
        }
    };
    let reply = match message {
        ClientMessage::Pause {} => app.control(Command::Pause).await.map(|state| {
            serde_json::json!({ "type": "control", "paused": state.paused, "frame": state.frame })
        }),
        ClientMessage::Step {} => app.control(Command::Step).await.map(|state| {
            serde_json::json!({ "type": "control", "paused": state.paused, "frame": state.frame })
        }),
        ClientMessage::Resume {} => app.control(Command::Resume).await.map(|state| {
            serde_json::json!({ "type": "control", "paused": state.paused, "frame": state.frame })
        }),
        ClientMessage::Entity { id } => app
            .ask(|reply| Request::Entity(id, reply))
            .await
            .map(|view| serde_json::json!({ "type": "entity", "id": id, "entity": view })),
        ClientMessage::Entities { offset, limit } => {
            if limit > MAX_PAGE {
                return socket_error(&format!("limit {limit} is over the most, {MAX_PAGE}"));
            }
            app.ask(|reply| Request::Entities(offset, limit, reply))
                .await
                .map(|list| serde_json::json!({ "type": "entities", "list": list }))
        }
    };
    match reply {
        Ok(value) => value.to_string(),
        Err(_) => socket_error("the game thread did not answer (queue full or game stopped)"),
    }
}

/// Accepts connections up to the cap; one past it is closed at once, so
/// a thousand clients cost a thousand accepts, not a thousand tasks.
struct CappedListener {
    listener: TcpListener,
    shared: Arc<Shared>,
}

impl CappedListener {
    /// The next connection under the cap; those past it are closed at once.
    async fn accept(&mut self) -> CountedStream {
        loop {
            let stream = match self.listener.accept().await {
                Ok((stream, _)) => stream,
                Err(_) => {
                    // Out of descriptors or an aborted handshake: wait a
                    // little rather than spin.
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            };
            let cap = self.shared.options.max_connections;
            let open = self.shared.connections.fetch_add(1, Ordering::AcqRel);
            if open >= cap {
                self.shared.connections.fetch_sub(1, Ordering::AcqRel);
                drop(stream);
                continue;
            }
            let _ = stream.set_nodelay(true);
            return CountedStream {
                stream,
                shared: Arc::clone(&self.shared),
            };
        }
    }
}

/// A connection, counted while open.
pub(crate) struct CountedStream {
    stream: TcpStream,
    shared: Arc<Shared>,
}

impl Drop for CountedStream {
    fn drop(&mut self) {
        self.shared.connections.fetch_sub(1, Ordering::AcqRel);
    }
}

impl AsyncRead for CountedStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for CountedStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}
