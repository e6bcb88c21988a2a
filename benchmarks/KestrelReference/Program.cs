using System;
using System.IO;
using System.Linq;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using System.Threading.Tasks;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

namespace KestrelReference;

internal static class Program
{
    // Public on purpose: a committed test certificate (certs/README.md).
    private const string CertificatePassword = "netserver";

    private static async Task<int> Main(string[] args)
    {
        Options? options;
        X509Certificate2? certificate = null;
        try
        {
            options = Options.Parse(args);
            if (options is { Https: true })
                certificate = X509CertificateLoader.LoadPkcs12FromFile(Path.Combine(options.LocateCertificates(), "server.pfx"), CertificatePassword);
        }
        catch (Exception e) when (e is ArgumentException or FormatException or IOException or CryptographicException)
        {
            Console.Error.WriteLine(e.Message);
            Console.Error.WriteLine(Options.Usage);
            return 2;
        }

        if (options is null)
        {
            Console.WriteLine(Options.Usage);
            return 0;
        }

        // Args stay out of the host's configuration: the options above are ours, not ASP.NET Core's.
        var builder = WebApplication.CreateSlimBuilder(new WebApplicationOptions { Args = [], ContentRootPath = AppContext.BaseDirectory });
        builder.Logging.ClearProviders();
        builder.WebHost.ConfigureKestrel(kestrel =>
        {
            // No "Server: Kestrel" line: the answer is the status line, Content-Length, Content-Type and Date.
            kestrel.AddServerHeader = false;
            kestrel.Listen(options.Address, options.Port, listen =>
            {
                // HTTP/1.1 only, the protocol our server speaks: no h2c, and no HTTP/2 offered by ALPN over TLS.
                listen.Protocols = HttpProtocols.Http1;
                if (certificate is not null)
                    listen.UseHttps(certificate);
            });
        });

        await using var app = builder.Build();
        using var stats = new TrafficStats(options.Stats);
        var body = options.Body;

        // The WebSocket middleware on /ws only: on every other request it would allocate its handshake feature (64 B).
        app.Map("/ws", ws =>
        {
            ws.UseWebSockets();
            ws.Run(context =>
            {
                stats.CountRequest();
                return WebSocketEcho.RunAsync(context, stats);
            });
        });
        app.Run(context =>
        {
            stats.CountRequest();
            var request = context.Request;
            if (HttpMethods.IsTrace(request.Method))
                return TraceEcho.RespondAsync(context);
            if (HttpMethods.IsGet(request.Method) || HttpMethods.IsHead(request.Method))
                return RespondFixedAsync(context.Response, body, HttpMethods.IsHead(request.Method));

            context.Response.StatusCode = StatusCodes.Status405MethodNotAllowed;
            context.Response.Headers.Allow = "GET, HEAD, TRACE";
            return Task.CompletedTask;
        });

        await app.StartAsync();
        var address = app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.First();
        Console.WriteLine($"listening on {address}");
        await app.WaitForShutdownAsync();
        stats.PrintTotals();
        return 0;
    }

    private static Task RespondFixedAsync(HttpResponse response, byte[] body, bool head)
    {
        response.StatusCode = StatusCodes.Status200OK;
        response.ContentType = "text/plain";
        response.ContentLength = body.Length;
        if (head)
            return Task.CompletedTask;

        // A write that completes at once (the usual case) returns no new Task: AsTask would allocate one per request.
        var write = response.BodyWriter.WriteAsync(body);
        return write.IsCompletedSuccessfully ? Task.CompletedTask : write.AsTask();
    }
}
