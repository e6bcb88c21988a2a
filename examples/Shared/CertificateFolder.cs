using System;
using System.Collections.Generic;
using System.IO;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace NetServer.Examples;

/// <summary>
/// The repository's test certificates (certs/, see certs/README.md): a private CA, a server
/// certificate for localhost, 127.0.0.1 and ::1, and a client certificate. Their private keys are
/// published with the code, so they are for trying TLS out, never for protecting anything.
/// Certificates loaded here are disposed with the folder.
/// </summary>
internal sealed class CertificateFolder : IDisposable
{
    /// <summary>The option that names the folder instead of letting the program look for it.</summary>
    public const string Option = "--certs";

    /// <summary>The test CA: trusted by both sides, for the server's and the client's certificate.</summary>
    public const string AuthorityFile = "ca.pem";

    /// <summary>The server's certificate with its private key.</summary>
    public const string ServerFile = "server.pfx";

    /// <summary>The client's certificate with its private key, for mutual authentication.</summary>
    public const string ClientFile = "client.pfx";

    // The password of both .pfx files (certs/README.md); as public as their keys.
    private const string PfxPassword = "netserver";

    private readonly List<X509Certificate2> _loaded = [];

    private CertificateFolder(string location) => Location = location;

    /// <summary>The folder's full path.</summary>
    public string Location { get; }

    /// <summary>
    /// The folder given with <see cref="Option"/>, or else the first certs/ folder holding the CA
    /// found walking up from the program's folder, then from the current one (so both
    /// <c>dotnet run</c> and a copied build find the repository's). Prints why and gives null when there is none.
    /// </summary>
    public static CertificateFolder? Open(string? given)
    {
        if (given is not null)
        {
            if (Directory.Exists(given))
                return new CertificateFolder(Path.GetFullPath(given));
            Console.WriteLine($"No folder {given}.");
            return null;
        }

        if ((FindAbove(AppContext.BaseDirectory) ?? FindAbove(Environment.CurrentDirectory)) is { } found)
            return new CertificateFolder(found);
        Console.WriteLine($"No certs folder with {AuthorityFile} above {AppContext.BaseDirectory} or {Environment.CurrentDirectory}; name one with {Option} DIR.");
        return null;
    }

    /// <summary>Loads a certificate (a .pfx with its private key, anything else as a PEM or DER certificate); prints why and gives null when it cannot.</summary>
    public X509Certificate2? Load(string file)
    {
        var path = Path.Combine(Location, file);
        if (!File.Exists(path))
        {
            // The loaders report a missing file as a vague cryptographic error.
            Console.WriteLine($"No file {path}.");
            return null;
        }

        try
        {
            var certificate = Path.GetExtension(file).Equals(".pfx", StringComparison.OrdinalIgnoreCase)
                ? X509CertificateLoader.LoadPkcs12FromFile(path, PfxPassword)
                : X509CertificateLoader.LoadCertificateFromFile(path);
            _loaded.Add(certificate);
            return certificate;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or CryptographicException)
        {
            Console.WriteLine($"Cannot load {path}: {e.Message}");
            return null;
        }
    }

    public void Dispose()
    {
        foreach (var certificate in _loaded)
            certificate.Dispose();
        _loaded.Clear();
    }

    private static string? FindAbove(string start)
    {
        for (var folder = new DirectoryInfo(start); folder is not null; folder = folder.Parent)
        {
            var candidate = Path.Combine(folder.FullName, "certs");
            if (File.Exists(Path.Combine(candidate, AuthorityFile)))
                return candidate;
        }

        return null;
    }
}
