using System;
using System.Buffers;
using System.Collections.Concurrent;
using System.Diagnostics;
using System.Net.WebSockets;
using System.Text;
using System.Text.Json;
using System.Text.Json.Nodes;
using System.Text.RegularExpressions;
using System.Threading;
using System.Threading.Channels;
using System.Threading.Tasks;
using Xunit;

namespace NetServer.Tests.Infrastructure;

/// <summary>
/// One page in headless Chromium that a test drives as a user would: it types into the page and
/// presses keys, and waits for the page's DOM to show something. Where <see cref="HeadlessBrowser"/>
/// dumps a page once its scripts are done, this one stays open, for pages that live on (a chat on a
/// WebSocket). Driven through the DevTools protocol
/// (https://chromedevtools.github.io/devtools-protocol/) over the browser's own WebSocket, reached
/// with the BCL's ClientWebSocket so the driver does not depend on the library under test. Every
/// wait is bounded by the timeout given to <see cref="OpenAsync"/>; disposing closes the browser
/// (killing it if it does not go) and removes its profile.
/// </summary>
internal sealed partial class BrowserPage : IAsyncDisposable
{
    private readonly Process _process;
    private readonly string _profile;
    private readonly TimeSpan _timeout;
    private readonly ConcurrentQueue<string> _log = new();
    private readonly ClientWebSocket _socket = new();
    private readonly ConcurrentDictionary<int, TaskCompletionSource<JsonNode?>> _pending = new();
    private readonly Channel<(string Method, JsonNode? Params)> _events = Channel.CreateUnbounded<(string, JsonNode?)>();
    private readonly CancellationTokenSource _closing = new();
    private readonly SemaphoreSlim _sending = new(1, 1);
    private Task _receiving = Task.CompletedTask;
    private string? _sessionId;
    private int _lastId;

    private BrowserPage(Process process, string profile, TimeSpan timeout)
    {
        _process = process;
        _profile = profile;
        _timeout = timeout;
    }

    /// <summary>
    /// Starts a browser, opens <paramref name="page"/> in it and returns once the page has loaded.
    /// <paramref name="arguments"/> are added to the browser's switches.
    /// </summary>
    public static async Task<BrowserPage> OpenAsync(Uri page, TimeSpan timeout, params string[] arguments)
    {
        var profile = HeadlessBrowser.NewProfile();
        var info = new ProcessStartInfo(HeadlessBrowser.Executable)
        {
            UseShellExecute = false,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        };
        foreach (var argument in HeadlessBrowser.Arguments(profile))
            info.ArgumentList.Add(argument);
        foreach (var argument in arguments)
            info.ArgumentList.Add(argument);

        // Port 0: the browser picks a free port and prints the address of its DevTools WebSocket.
        info.ArgumentList.Add("--remote-debugging-port=0");
        info.ArgumentList.Add("about:blank");

        var listening = new TaskCompletionSource<Uri>(TaskCreationOptions.RunContinuationsAsynchronously);
        var process = Process.Start(info) ?? throw new InvalidOperationException($"{info.FileName} did not start.");
        var browser = new BrowserPage(process, profile, timeout);
        process.OutputDataReceived += (_, e) => browser.Record(e.Data);
        process.ErrorDataReceived += (_, e) =>
        {
            browser.Record(e.Data);
            if (e.Data is { } line && DevToolsAddress().Match(line) is { Success: true } match)
                listening.TrySetResult(new Uri(match.Groups[1].Value));
        };
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();

        try
        {
            var devTools = await browser.Bounded(listening.Task, "the browser to open its DevTools port");
            await browser._socket.ConnectAsync(devTools, CancellationToken.None).WaitAsync(timeout);
            browser._receiving = browser.ReceiveAsync();

            // A tab of our own, attached with a flat session: its commands and events carry the session's id.
            var target = await browser.SendAsync("Target.createTarget", new JsonObject { ["url"] = "about:blank" }, session: false);
            var attached = await browser.SendAsync("Target.attachToTarget", new JsonObject { ["targetId"] = target!["targetId"]!.GetValue<string>(), ["flatten"] = true }, session: false);
            browser._sessionId = attached!["sessionId"]!.GetValue<string>();
            await browser.SendAsync("Page.enable");
            await browser.NavigateAsync(page);
            return browser;
        }
        catch
        {
            await browser.DisposeAsync();
            throw;
        }
    }

    /// <summary>The browser's console output, for failure messages.</summary>
    public string Log => HeadlessBrowser.Tail(string.Join('\n', _log));

    /// <summary>Runs <paramref name="expression"/> in the page (awaiting it if it is a promise) and returns its value as JSON.</summary>
    public async Task<JsonNode?> EvaluateAsync(string expression)
    {
        var answer = await SendAsync("Runtime.evaluate", new JsonObject
        {
            ["expression"] = expression,
            ["awaitPromise"] = true,
            ["returnByValue"] = true,
        });
        if (answer!["exceptionDetails"] is { } exception)
            throw new InvalidOperationException($"The page threw evaluating {expression}: {exception.ToJsonString()}");
        return answer["result"]?["value"];
    }

    /// <summary>
    /// Waits until <paramref name="condition"/> (a JavaScript expression) is true in the page. The
    /// page checks it on each change of its DOM (a MutationObserver), so nothing polls; on timeout
    /// the test fails with <paramref name="what"/> and the text the page shows.
    /// </summary>
    public async Task WaitUntilAsync(string condition, string what)
    {
        var expression = $$"""
            new Promise(resolve => {
              const met = () => { try { return !!({{condition}}); } catch { return false; } };
              if (met()) { resolve(true); return; }
              const observer = new MutationObserver(() => { if (met()) { observer.disconnect(); resolve(true); } });
              observer.observe(document.documentElement, { subtree: true, childList: true, characterData: true, attributes: true });
            })
            """;
        try
        {
            await EvaluateAsync(expression).WaitAsync(_timeout);
        }
        catch (TimeoutException)
        {
            Assert.Fail($"The page did not show {what} within {_timeout.TotalSeconds} s. It shows:{Environment.NewLine}{await TextAsync()}");
        }
    }

    /// <summary>The text the page shows (its body's innerText), or why it cannot be had.</summary>
    public async Task<string> TextAsync()
    {
        try
        {
            return (await EvaluateAsync("document.body.innerText").WaitAsync(_timeout))?.GetValue<string>() ?? string.Empty;
        }
        catch (Exception e) when (e is TimeoutException or InvalidOperationException or WebSocketException)
        {
            return $"(no text: {e.Message})";
        }
    }

    /// <summary>Focuses the element <paramref name="selector"/> names and types <paramref name="text"/> into it, as a keyboard would insert it.</summary>
    public async Task TypeAsync(string selector, string text)
    {
        await EvaluateAsync($"document.querySelector({JsonSerializer.Serialize(selector)}).focus()");
        await SendAsync("Input.insertText", new JsonObject { ["text"] = text });
    }

    /// <summary>Presses and releases Enter in the focused element (a form's implicit submission).</summary>
    public async Task PressEnterAsync()
    {
        foreach (var type in new[] { "keyDown", "keyUp" })
        {
            var key = new JsonObject { ["type"] = type, ["key"] = "Enter", ["code"] = "Enter", ["windowsVirtualKeyCode"] = 13, ["nativeVirtualKeyCode"] = 13 };
            if (type == "keyDown")
                key["text"] = "\r"; // a key that types a character: this is what submits the form
            await SendAsync("Input.dispatchKeyEvent", key);
        }
    }

    public async ValueTask DisposeAsync()
    {
        try
        {
            if (_socket.State == WebSocketState.Open)
                await SendAsync("Browser.close", session: false).WaitAsync(_timeout);
        }
        catch (Exception e) when (e is TimeoutException or WebSocketException or InvalidOperationException)
        {
            // The browser may end before it answers; one that does not end is killed below.
        }

        try
        {
            await _process.WaitForExitAsync().WaitAsync(_timeout);
        }
        catch (TimeoutException)
        {
            // Killed below.
        }
        finally
        {
            if (!_process.HasExited)
                _process.Kill(entireProcessTree: true);
            await _closing.CancelAsync();
            _socket.Abort();
            await _receiving;
            _socket.Dispose();
            _process.Dispose();
            _closing.Dispose();
            _sending.Dispose();
            HeadlessBrowser.DeleteProfile(_profile);
        }
    }

    [GeneratedRegex(@"DevTools listening on (ws://\S+)")]
    private static partial Regex DevToolsAddress();

    private void Record(string? line)
    {
        if (line is not null)
            _log.Enqueue(line);
    }

    /// <summary>Navigates the tab and returns once the new page fired its load event.</summary>
    private async Task NavigateAsync(Uri page)
    {
        var answer = await SendAsync("Page.navigate", new JsonObject { ["url"] = page.AbsoluteUri });
        if (answer?["errorText"] is { } error)
            Assert.Fail($"The browser could not load {page}: {error}");

        // The load event of about:blank may still come through: the page's own is the one after which it is at its address.
        do
            await NextEventAsync("Page.loadEventFired");
        while ((await EvaluateAsync("location.href"))?.GetValue<string>() != page.AbsoluteUri);
    }

    private async Task NextEventAsync(string method)
    {
        using var timeout = new CancellationTokenSource(_timeout);
        try
        {
            while (true)
            {
                var (name, _) = await _events.Reader.ReadAsync(timeout.Token);
                if (name == method)
                    return;
            }
        }
        catch (OperationCanceledException)
        {
            Assert.Fail($"No {method} from the browser within {_timeout.TotalSeconds} s. Browser log:{Environment.NewLine}{Log}");
        }
    }

    /// <summary>Sends a command (to the page's session unless <paramref name="session"/> is false) and returns its result.</summary>
    private async Task<JsonNode?> SendAsync(string method, JsonObject? parameters = null, bool session = true)
    {
        var id = Interlocked.Increment(ref _lastId);
        var command = new JsonObject { ["id"] = id, ["method"] = method, ["params"] = parameters ?? new JsonObject() };
        if (session)
            command["sessionId"] = _sessionId;
        var answer = new TaskCompletionSource<JsonNode?>(TaskCreationOptions.RunContinuationsAsynchronously);
        _pending[id] = answer;

        // ClientWebSocket takes one send at a time.
        if (!await _sending.WaitAsync(_timeout))
        {
            _pending.TryRemove(id, out _);
            throw new TimeoutException($"Could not send {method} to the browser within {_timeout.TotalSeconds} s.");
        }

        try
        {
            await _socket.SendAsync(Encoding.UTF8.GetBytes(command.ToJsonString()), WebSocketMessageType.Text, endOfMessage: true, CancellationToken.None).WaitAsync(_timeout);
        }
        catch
        {
            _pending.TryRemove(id, out _);
            throw;
        }
        finally
        {
            _sending.Release();
        }

        // Not bounded here: an evaluation awaiting a promise may take as long as its caller allows.
        return await answer.Task;
    }

    /// <summary>Reads the browser's messages: answers complete their commands, events go to the queue.</summary>
    private async Task ReceiveAsync()
    {
        var message = new ArrayBufferWriter<byte>();
        var ended = "The browser closed its DevTools connection.";
        try
        {
            while (!_closing.IsCancellationRequested)
            {
                message.ResetWrittenCount();
                ValueWebSocketReceiveResult part;
                do
                {
                    part = await _socket.ReceiveAsync(message.GetMemory(64 * 1024), _closing.Token);
                    message.Advance(part.Count);
                }
                while (!part.EndOfMessage && part.MessageType != WebSocketMessageType.Close);
                if (part.MessageType == WebSocketMessageType.Close)
                    break;
                Dispatch(JsonNode.Parse(message.WrittenSpan));
            }
        }
        catch (Exception e) when (e is WebSocketException or OperationCanceledException)
        {
            // The browser went away, or we are closing: the commands still waiting fail below.
        }
        catch (JsonException e)
        {
            ended = $"The browser sent a message that is not JSON: {e.Message}";
        }
        finally
        {
            foreach (var (_, pending) in _pending)
                pending.TrySetException(new InvalidOperationException($"{ended} Browser log:{Environment.NewLine}{Log}"));
            _events.Writer.TryComplete();
        }
    }

    private void Dispatch(JsonNode? message)
    {
        if (message?["id"] is { } id)
        {
            if (!_pending.TryRemove(id.GetValue<int>(), out var pending))
                return;
            if (message["error"] is { } error)
                pending.TrySetException(new InvalidOperationException($"The browser refused a command: {error.ToJsonString()}"));
            else
                pending.TrySetResult(message["result"]);
        }
        else if (message?["method"] is { } method && (string?)message["sessionId"] == _sessionId)
        {
            _events.Writer.TryWrite((method.GetValue<string>(), message["params"]));
        }
    }

    private async Task<T> Bounded<T>(Task<T> task, string what)
    {
        try
        {
            return await task.WaitAsync(_timeout);
        }
        catch (TimeoutException)
        {
            Assert.Fail($"No {what} within {_timeout.TotalSeconds} s. Browser log:{Environment.NewLine}{Log}");
            throw;
        }
    }
}
