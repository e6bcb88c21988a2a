using System;
using System.IO;
using System.Security.Cryptography.X509Certificates;

namespace NetServer.Benchmark;

/// <summary>
/// The repository's test certificates (certs/): the server presents server.pfx, the client trusts
/// ca.pem, so the benchmark validates certificates as a real deployment would.
/// </summary>
internal static class TestCertificates
{
    private const string ServerFile = "server.pfx";
    private const string AuthorityFile = "ca.pem";

    // Public on purpose: these are committed test files (see certs/README.md).
    private const string Password = "netserver";

    /// <summary>The folder given with --certs, or the first certs/ with both files above the program.</summary>
    /// <exception cref="DirectoryNotFoundException">There is no such folder.</exception>
    public static string Locate(string? given)
    {
        if (given is not null)
        {
            return Directory.Exists(given)
                ? Path.GetFullPath(given)
                : throw new DirectoryNotFoundException($"Certificate folder '{given}' (--certs) does not exist.");
        }

        // The program runs from bin/<configuration>/<framework>/ of the repository (or next to the tests).
        for (var folder = new DirectoryInfo(AppContext.BaseDirectory); folder is not null; folder = folder.Parent)
        {
            var candidate = Path.Combine(folder.FullName, "certs");
            if (File.Exists(Path.Combine(candidate, ServerFile)) && File.Exists(Path.Combine(candidate, AuthorityFile)))
                return candidate;
        }

        throw new DirectoryNotFoundException(
            $"No certs/ folder with {ServerFile} and {AuthorityFile} found above {AppContext.BaseDirectory}; pass --certs DIR.");
    }

    /// <summary>A server context presenting <c>server.pfx</c> from <paramref name="folder"/>.</summary>
    public static SslContext ServerContext(string folder) =>
        new() { Certificate = X509CertificateLoader.LoadPkcs12FromFile(Require(folder, ServerFile), Password) };

    /// <summary>A client context that trusts <c>ca.pem</c> from <paramref name="folder"/> besides the system's roots.</summary>
    public static SslContext ClientContext(string folder)
    {
        var context = new SslContext();
        context.TrustedCertificateAuthorities.Add(X509CertificateLoader.LoadCertificateFromFile(Require(folder, AuthorityFile)));
        return context;
    }

    private static string Require(string folder, string name)
    {
        var path = Path.Combine(folder, name);
        return File.Exists(path) ? path : throw new FileNotFoundException($"Certificate folder {folder} has no {name}.", path);
    }
}
