using System;
using System.Globalization;
using System.IO;
using System.Net;
using System.Text;

namespace KestrelReference;

/// <summary>The command line of kestrel-reference.</summary>
internal sealed class Options
{
    public const string Usage = """
        kestrel-reference: Kestrel answering the HTTP and WebSocket benchmark requests.

        Usage: kestrel-reference [options]
          --address A      address to listen on (default 127.0.0.1)
          --port N         port to listen on; 0 (the default) takes a free one. The program prints
                           "listening on http://ADDRESS:PORT" (https:// with --https) once it listens.
          --body TEXT      the body every GET answer carries, as text/plain (default "Hello, World!")
          --https          TLS with certs/server.pfx (the repository's test certificate)
          --certs DIR      the folder with server.pfx (default: certs/ found upwards from the program)
          --stats          print requests, WebSocket messages and allocated bytes per request to
                           stderr once a second while there is traffic, and the totals on exit
          -h, --help       this text

        GET and HEAD on any path outside /ws: 200 with the body. TRACE on any path: 200, message/http,
        the request head as received. /ws: a WebSocket that sends every message back with its type.
        Stop it with Ctrl+C or SIGTERM.
        """;

    public IPAddress Address { get; private set; } = IPAddress.Loopback;

    public int Port { get; private set; }

    /// <summary>The body of every GET answer, as sent.</summary>
    public byte[] Body { get; private set; } = Encoding.UTF8.GetBytes("Hello, World!");

    public bool Https { get; private set; }

    public string? CertificateFolder { get; private set; }

    public bool Stats { get; private set; }

    /// <summary>The options in <paramref name="args"/>, or null when help was asked for.</summary>
    /// <exception cref="ArgumentException">An unknown option or a missing value.</exception>
    /// <exception cref="FormatException">A value that is not of its option's kind.</exception>
    public static Options? Parse(string[] args)
    {
        var options = new Options();
        for (var i = 0; i < args.Length; i++)
        {
            switch (args[i])
            {
                case "--address":
                    options.Address = IPAddress.Parse(Value(args, ref i));
                    break;
                case "--port":
                    var port = int.Parse(Value(args, ref i), NumberStyles.None, CultureInfo.InvariantCulture);
                    options.Port = port <= IPEndPoint.MaxPort ? port : throw new FormatException($"--port {port} is above {IPEndPoint.MaxPort}.");
                    break;
                case "--body":
                    options.Body = Encoding.UTF8.GetBytes(Value(args, ref i));
                    break;
                case "--https":
                    options.Https = true;
                    break;
                case "--certs":
                    options.CertificateFolder = Value(args, ref i);
                    break;
                case "--stats":
                    options.Stats = true;
                    break;
                case "-h" or "--help":
                    return null;
                default:
                    throw new ArgumentException($"Unknown option {args[i]}.");
            }
        }

        return options;
    }

    /// <summary>The certificate folder: the one given, or the first certs/ with server.pfx above the program.</summary>
    /// <exception cref="DirectoryNotFoundException">There is no such folder.</exception>
    public string LocateCertificates()
    {
        if (CertificateFolder is not null)
        {
            return Directory.Exists(CertificateFolder)
                ? Path.GetFullPath(CertificateFolder)
                : throw new DirectoryNotFoundException($"Certificate folder '{CertificateFolder}' (--certs) does not exist.");
        }

        // The program runs from bin/<configuration>/<framework>/ inside the repository.
        for (var folder = new DirectoryInfo(AppContext.BaseDirectory); folder is not null; folder = folder.Parent)
        {
            var candidate = Path.Combine(folder.FullName, "certs");
            if (File.Exists(Path.Combine(candidate, "server.pfx")))
                return candidate;
        }

        throw new DirectoryNotFoundException($"No certs/ folder with server.pfx found above {AppContext.BaseDirectory}; pass --certs DIR.");
    }

    private static string Value(string[] args, ref int i) =>
        ++i < args.Length ? args[i] : throw new ArgumentException($"{args[i - 1]} needs a value.");
}
