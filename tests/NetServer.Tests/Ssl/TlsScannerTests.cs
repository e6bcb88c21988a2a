using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Text.Json;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Ssl;

/// <summary>
/// testssl.sh (Debian's `testssl`) against the HTTPS and WSS examples as a user runs them: the
/// protocols offered, every cipher suite per protocol, and its vulnerability checks. Default
/// settings must offer nothing below TLS 1.2, no CBC, RC4, 3DES, NULL, export or anonymous suite,
/// and draw no vulnerability finding.
/// </summary>
[Collection(nameof(TlsScannerCollection))]
public sealed class TlsScannerTests
{
    private static readonly TimeSpan s_scanTimeout = TimeSpan.FromMinutes(6);

    [TestsslFact]
    public Task HttpsServer_example_passes_the_scan() => ScanAsync("HttpsServer", "0");

    [TestsslFact]
    public Task WssChatServer_example_passes_the_scan() => ScanAsync("WssChatServer", "0", "127.0.0.1");

    private static async Task ScanAsync(string example, params string[] args)
    {
        await using var server = ProgramProcess.Start(example, args);
        var port = await server.ListeningPortAsync();
        var json = Path.Combine(Path.GetTempPath(), $"testssl-{example}-{Guid.NewGuid():N}.json");
        try
        {
            // -p protocols, -e every cipher suite the server accepts, -U the vulnerability checks
            // (Heartbleed, CCS, ROBOT, renegotiation, CRIME, BREACH, POODLE, SWEET32, FREAK, DROWN,
            // LOGJAM, BEAST, LUCKY13, RC4...); --ip one: the address given, no DNS.
            await using (var scan = ProgramProcess.StartTool("testssl", s_scanTimeout, new Dictionary<string, string>(),
                "--quiet", "--color", "0", "--warnings", "off", "--ip", "one", "-p", "-e", "-U",
                "--jsonfile", json, "127.0.0.1:" + port.ToString(CultureInfo.InvariantCulture)))
            {
                await scan.WaitForExitAsync();
            }

            var findings = Findings(json);
            Assert.True(findings.Count > 20, $"testssl reported {findings.Count} findings: the scan did not run through.\n{string.Join("\n", findings)}");

            foreach (var old in new[] { "SSLv2", "SSLv3", "TLS1", "TLS1_1" })
                Assert.Contains("not offered", Finding(findings, old), StringComparison.OrdinalIgnoreCase);
            Assert.DoesNotContain("not offered", Finding(findings, "TLS1_2"), StringComparison.OrdinalIgnoreCase);
            Assert.DoesNotContain("not offered", Finding(findings, "TLS1_3"), StringComparison.OrdinalIgnoreCase);

            // -e lists each accepted suite as cipher-<hexcode> with its OpenSSL name in the finding.
            var suites = findings.Where(f => f.Id.StartsWith("cipher-", StringComparison.Ordinal) || f.Id.StartsWith("cipher_x", StringComparison.Ordinal)).ToList();
            Assert.NotEmpty(suites);
            foreach (var suite in suites)
            {
                foreach (var weak in new[] { "CBC", "-SHA ", "RC4", "DES", "NULL", "EXP", "ADH", "AECDH", "MD5" })
                    Assert.DoesNotContain(weak, suite.Finding + " ", StringComparison.Ordinal);
            }

            var bad = findings.Where(f => f.Severity is "MEDIUM" or "HIGH" or "CRITICAL").ToList();
            Assert.True(bad.Count == 0, "testssl findings:\n" + string.Join("\n", bad));
        }
        finally
        {
            File.Delete(json);
        }
    }

    private static string Finding(IReadOnlyList<ScanFinding> findings, string id) =>
        findings.FirstOrDefault(f => f.Id == id)?.Finding ?? throw new Xunit.Sdk.XunitException($"testssl gave no '{id}' finding");

    private static List<ScanFinding> Findings(string json)
    {
        Assert.True(File.Exists(json), "testssl wrote no JSON file");
        using var document = JsonDocument.Parse(File.ReadAllText(json));
        return document.RootElement.EnumerateArray()
            .Select(e => new ScanFinding(e.GetProperty("id").GetString()!, e.GetProperty("severity").GetString()!, e.GetProperty("finding").GetString()!))
            .ToList();
    }

    private sealed record ScanFinding(string Id, string Severity, string Finding)
    {
        public override string ToString() => $"{Id} [{Severity}] {Finding}";
    }
}
